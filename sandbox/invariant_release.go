//go:build cordon_release

package sandbox

const devBuild = false
