package winacl

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunnerArgs(t *testing.T) {
	sid := grantSID(`C:\ws`)
	cfg := runnerConfig{token: TokenRestricted, sids: []string{sid}, argv: []string{"git", "--", "status"}}
	got, err := parseRunnerArgs(cfg.args())
	require.NoError(t, err)
	assert.Equal(t, cfg, got, "a -- inside the command is the command's")

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "needs --windows-acl first"},
		{[]string{"--landlock", "1", "--", "true"}, "needs --windows-acl first"},
		{[]string{"--windows-acl", "--", "true"}, "--token is required"},
		{[]string{"--windows-acl", "--token", "admin", "--", "true"}, `unknown token "admin"`},
		{[]string{"--windows-acl", "--token", "restricted", "--sid", "S-1-5-18", "--", "true"}, "not a cordon grant SID"},
		{[]string{"--windows-acl", "--token", "restricted", "--sid", sidGrantPrefix + "1-2-3", "--", "true"}, "not a cordon grant SID"},
		{[]string{"--windows-acl", "--token", "restricted", "--sid"}, "--sid needs a value"},
		{[]string{"--windows-acl", "--token", "restricted", "--"}, "no command after --"},
		{[]string{"--windows-acl", "--token", "restricted", "true"}, `unknown runner argument "true"`},
		{[]string{"--windows-acl", "--token", "restricted"}, "missing -- before the command"},
	} {
		_, err := parseRunnerArgs(tc.args)
		assert.ErrorContains(t, err, tc.err, "%q", tc.args)
	}
}

func TestRunnerExitCodes(t *testing.T) {
	for _, tc := range []struct {
		errno  uint32
		code   int
		runner bool
	}{
		{errorFileNotFound, 127, false},
		{errorPathNotFound, 127, false},
		{errorAccessDenied, 126, false},
		{errorBadExeFormat, 126, false},
		{errorElevationRequired, 126, false},
		{1314, 125, true}, // ERROR_PRIVILEGE_NOT_HELD: the token was refused
	} {
		code, runner := startFailure(tc.errno)
		assert.Equal(t, tc.code, code, "errno %d", tc.errno)
		assert.Equal(t, tc.runner, runner, "errno %d", tc.errno)
	}

	code, failure := childExit(3)
	assert.Equal(t, 3, code)
	assert.Empty(t, failure)
	code, failure = childExit(0xC000013A) // STATUS_CONTROL_C_EXIT: the command's own end
	assert.Equal(t, 0xC000013A, code)
	assert.Empty(t, failure)
	code, failure = childExit(statusDLLInitFailed)
	assert.Equal(t, 125, code)
	assert.Contains(t, failure, "STATUS_DLL_INIT_FAILED")
	assert.Equal(t, "cordon: sandbox runner failed: "+failure+"\n", failureLine(errors.New(failure)),
		"the runner reports it the way sandbox's rule recognises")
}
