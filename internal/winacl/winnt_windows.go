package winacl

import "golang.org/x/sys/windows"

// The plan spells Windows constants out so it can be tested on any OS;
// each line below fails to compile (index out of range) if one differs.
var (
	_ = [1]struct{}{}[fileWriteData-windows.FILE_WRITE_DATA]
	_ = [1]struct{}{}[fileAppendData-windows.FILE_APPEND_DATA]
	_ = [1]struct{}{}[fileWriteEA-windows.FILE_WRITE_EA]
	_ = [1]struct{}{}[fileWriteAttributes-windows.FILE_WRITE_ATTRIBUTES]
	_ = [1]struct{}{}[deleteAccess-windows.DELETE]
	_ = [1]struct{}{}[writeDAC-windows.WRITE_DAC]
	_ = [1]struct{}{}[writeOwner-windows.WRITE_OWNER]
	_ = [1]struct{}{}[fileGenericRead-windows.FILE_GENERIC_READ]
	_ = [1]struct{}{}[fileGenericWrite-windows.FILE_GENERIC_WRITE]
	_ = [1]struct{}{}[fileGenericExecute-windows.FILE_GENERIC_EXECUTE]
	_ = [1]struct{}{}[jobKillOnJobClose-windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE]
	_ = [1]struct{}{}[jobDieOnUnhandledException-windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION]
	_ = [1]struct{}{}[jobUILimits-(windows.JOB_OBJECT_UILIMIT_DESKTOP|windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS|
		windows.JOB_OBJECT_UILIMIT_EXITWINDOWS|windows.JOB_OBJECT_UILIMIT_GLOBALATOMS|windows.JOB_OBJECT_UILIMIT_HANDLES|
		windows.JOB_OBJECT_UILIMIT_READCLIPBOARD|windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS|windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD)]
	_ = [1]struct{}{}[errorAccessDenied-windows.ERROR_ACCESS_DENIED]
	_ = [1]struct{}{}[errorBadExeFormat-windows.ERROR_BAD_EXE_FORMAT]
	_ = [1]struct{}{}[errorElevationRequired-windows.ERROR_ELEVATION_REQUIRED]
	_ = [1]struct{}{}[statusDLLInitFailed-windows.STATUS_DLL_INIT_FAILED]
)
