// Package config reads cordon's TOML configuration (SPEC §8) and merges it
// with the command line into one Config, remembering where every value
// came from.
//
// Every key is declared once, in keys.go: its name, how its values are
// written and checked, its default, what a workspace file may do with it,
// its flags, and whether a running server can apply a change. The
// declarations drive the parser (keys.go is the whole schema: anything else
// is an unknown key), the layers, the settings table of `cordon status` and
// the SIGHUP diff; adding a key is one declaration and a row in
// TestEveryKey.
//
// The layers, later ones overriding earlier:
//
//  1. the defaults;
//  2. the user's file, $XDG_CONFIG_HOME/cordon/config.toml else
//     ~/.config/cordon/config.toml: trusted, may widen;
//  3. the workspace's cordon.toml, then its .cordon/config.toml (both are
//     read when both exist): may only tighten, see workspace.go;
//  4. --config FILE: trusted, like the user's file;
//  5. the flags, which outrank every file in both directions.
//
// In a trusted layer a key replaces the earlier value, lists included. A
// preset sets mode and approval, and an explicit mode or approval in the
// same layer beats the layer's preset.
//
// Any problem in any file fails the whole load, every problem reported as
// FILE:LINE: KEY: what is wrong and what to write instead: cordon never
// runs half-configured. The package reads files and nothing else; turning
// a Config into a running deployment is the command's business.
package config
