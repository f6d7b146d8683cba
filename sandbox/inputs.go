package sandbox

import "github.com/cordonhq/cordon/internal/pathx"

// PolicyInputs are the paths a policy was derived from (see
// [pathx.Inputs]): a policy stays what Resolve would return again for as
// long as none of them changes.
type PolicyInputs = pathx.Inputs
