package winacl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGrantSIDIsStableAndDistinct(t *testing.T) {
	a := grantSID(`C:\Users\me\src\proj`)
	assert.Equal(t, a, grantSID(`C:\Users\me\src\proj`), "the same root gets the same SID in every process")
	assert.Equal(t, a, grantSID(`c:\users\ME\src\proj`), "NTFS is case-insensitive")
	assert.NotEqual(t, a, grantSID(`C:\Users\me\src\proj2`))
	assert.True(t, strings.HasPrefix(a, "S-1-9-1668248164-1-"), a)
	assert.True(t, validGrantSID(a), a)
	assert.Len(t, strings.Split(a, "-"), 9, "S-1-9, the cordon marker, the kind and four hash sub-authorities")

	obj, err := newObjectSID(bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
	require.NoError(t, err)
	assert.Equal(t, "S-1-9-1668248164-2-4294967295-4294967295-4294967295-4294967295", obj)
	assert.False(t, validGrantSID(obj), "an object SID is not a grant SID")
	_, err = newObjectSID(bytes.NewReader(nil))
	assert.Error(t, err)
}
