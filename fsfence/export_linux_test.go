package fsfence

import "golang.org/x/sys/unix"

// Lineage is lineage of the directory at path, as (device, inode) pairs.
// Tests only.
func Lineage(path string) ([][2]uint64, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ids, err := lineage(fd)
	var out [][2]uint64
	for _, id := range ids {
		out = append(out, [2]uint64{id.dev, id.ino})
	}
	return out, err
}
