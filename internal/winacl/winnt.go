package winacl

// Access rights, spelled out from winnt.h so that the plan can be tested
// anywhere; winnt_windows.go fails to build if one of them differs from
// golang.org/x/sys/windows.
const (
	fileWriteData       = 0x00000002 // FILE_WRITE_DATA; FILE_ADD_FILE on a directory
	fileAppendData      = 0x00000004 // FILE_APPEND_DATA; FILE_ADD_SUBDIRECTORY on a directory
	fileWriteEA         = 0x00000010
	fileDeleteChild     = 0x00000040
	fileWriteAttributes = 0x00000100
	deleteAccess        = 0x00010000 // DELETE
	writeDAC            = 0x00040000
	writeOwner          = 0x00080000

	fileGenericRead    = 0x00120089
	fileGenericWrite   = 0x00120116
	fileGenericExecute = 0x001200A0

	// grantMask is what a writable root's SID may do: everything but
	// changing permissions or ownership, so a confined command can never
	// remove the deny entries that protect paths inside the root.
	grantMask = fileGenericRead | fileGenericWrite | fileGenericExecute | deleteAccess | fileDeleteChild

	// denyWriteMask keeps a protected path read-only: no data, no
	// attributes, no new entries in it, no delete, no permission change.
	denyWriteMask = fileWriteData | fileAppendData | fileWriteEA | fileWriteAttributes |
		deleteAccess | fileDeleteChild | writeDAC | writeOwner
)

// Token and job settings, from winnt.h as well.
const (
	disableMaxPrivilege = 0x1 // all privileges but SeChangeNotifyPrivilege go
	luaToken            = 0x4 // an elevated token loses its administrator rights
	writeRestricted     = 0x8 // restricting SIDs apply to write access only

	jobKillOnJobClose          = 0x00002000
	jobDieOnUnhandledException = 0x00000400

	// jobUILimits is every JOB_OBJECT_UILIMIT_* flag. HANDLES matters
	// most: it stops a confined process from sending window messages to the
	// user's unconfined programs on the same desktop (the Windows cousin of
	// TIOCSTI injection); the clipboard flags keep it from reading secrets
	// from, or planting commands in, the clipboard.
	jobUILimits = 0xFF
)
