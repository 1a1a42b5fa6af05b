package retain

// The store's format — ids, errors, names, descriptors, the line index,
// run entries, tombstones, read and ledger records, problems — lives in
// internal/format, shared with the backends; the store names it here, as
// its exported API always has.

import format "github.com/retval/retval/pkg/retain/internal/format"

type (
	Code              = format.Code
	CollectedIDs      = format.CollectedIDs
	Compression       = format.Compression
	DebrisError       = format.DebrisError
	Descriptor        = format.Descriptor
	EntryKind         = format.EntryKind
	Error             = format.Error
	Generation        = format.Generation
	HintError         = format.HintError
	ID                = format.ID
	Index             = format.Index
	indexBuilder      = format.IndexBuilder
	interner          = format.Interner
	ledgerRecord      = format.LedgerRecord
	Problem           = format.Problem
	Read              = format.Read
	ReadLogInfo       = format.ReadLogInfo
	ReadOnlyError     = format.ReadOnlyError
	ReadOp            = format.ReadOp
	RefusedError      = format.RefusedError
	RunChangedError   = format.RunChangedError
	RunEntry          = format.RunEntry
	RunInfo           = format.RunInfo
	StepSpent         = format.StepSpent
	Tombstone         = format.Tombstone
	TombstoneFile     = format.TombstoneFile
	TrashEntry        = format.TrashEntry
	UnknownRunError   = format.UnknownRunError
	UnknownValueError = format.UnknownValueError
	valueProblem      = format.ValueProblem
)

const (
	activityEvery        = format.ActivityEvery
	activityName         = format.ActivityName
	BlockSize            = format.BlockSize
	CodeAmbiguousJSON    = format.CodeAmbiguousJSON
	CodeBadPointer       = format.CodeBadPointer
	CodeBadReference     = format.CodeBadReference
	CodeBudgetExhausted  = format.CodeBudgetExhausted
	CodeBusy             = format.CodeBusy
	CodeCapacity         = format.CodeCapacity
	CodeCollected        = format.CodeCollected
	CodeConflict         = format.CodeConflict
	CodeCorrupt          = format.CodeCorrupt
	CodeDigestMismatch   = format.CodeDigestMismatch
	CodeExpandRefused    = format.CodeExpandRefused
	CodeIO               = format.CodeIO
	CodeInvalidRange     = format.CodeInvalidRange
	CodeNotJSON          = format.CodeNotJSON
	CodeNotString        = format.CodeNotString
	CodeNotUTF8          = format.CodeNotUTF8
	CodeReadOnly         = format.CodeReadOnly
	CodeTooLarge         = format.CodeTooLarge
	CodeUnknownReference = format.CodeUnknownReference
	CodeUsage            = format.CodeUsage
	CompressNone         = format.CompressNone
	CompressZstd         = format.CompressZstd
	dirMode              = format.DirMode
	fileMode             = format.FileMode
	indexHeader          = format.IndexHeader
	IndexMinSize         = format.IndexMinSize
	KindOrphan           = format.KindOrphan
	KindOwn              = format.KindOwn
	KindStray            = format.KindStray
	KindTemp             = format.KindTemp
	KindValue            = format.KindValue
	ledgerSize           = format.LedgerSize
	LineStride           = format.LineStride
	lockName             = format.LockName
	MaxCallIDBytes       = format.MaxCallIDBytes
	MaxCollectedIDsBytes = format.MaxCollectedIDsBytes
	MaxIDLen             = format.MaxIDLen
	maxIndexSize         = format.MaxIndexSize
	maxLedgerSize        = format.MaxLedgerSize
	MaxReadLog           = format.MaxReadLog
	MaxReadRecord        = format.MaxReadRecord
	MaxReadSel           = format.MaxReadSel
	maxScanned           = format.MaxScanned
	MaxTombstoneBytes    = format.MaxTombstoneBytes
	MaxToolBytes         = format.MaxToolBytes
	metaExt              = format.MetaExt
	OpCompose            = format.OpCompose
	OpPreview            = format.OpPreview
	OpRead               = format.OpRead
	OpReference          = format.OpReference
	OpRefused            = format.OpRefused
	OpStub               = format.OpStub
	OpVerbatim           = format.OpVerbatim
	ProblemCorrupt       = format.ProblemCorrupt
	ProblemDebris        = format.ProblemDebris
	ProblemMissing       = format.ProblemMissing
	readsName            = format.ReadsName
	runSuffix            = format.RunSuffix
	stepsDirName         = format.StepsDirName
	storeDirName         = format.StoreDirName
	tmpPrefix            = format.TmpPrefix
	tombstoneDir         = format.TombstoneDir
	tombstoneExt         = format.TombstoneExt
)

var (
	appendRecord      = format.AppendRecord
	asTyped           = format.AsTyped
	collectedIDsName  = format.CollectedIDsName
	contentName       = format.ContentName
	ErrBusy           = format.ErrBusy
	ErrCapacity       = format.ErrCapacity
	ErrCollected      = format.ErrCollected
	ErrConflict       = format.ErrConflict
	ErrCorrupt        = format.ErrCorrupt
	ErrLedgerChanged  = format.ErrLedgerChanged
	ErrNotFound       = format.ErrNotFound
	ErrReadOnly       = format.ErrReadOnly
	isTemp            = format.IsTemp
	linesName         = format.LinesName
	marshalDescriptor = format.MarshalDescriptor
	metaName          = format.MetaName
	newIndexBuilder   = format.NewIndexBuilder
	parseCollectedIDs = format.ParseCollectedIDs
	parseRecord       = format.ParseRecord
	runDir            = format.RunDir
	valueOf           = format.ValueOf
)

// CodeOf returns the code of the first *Error in err's chain, CodeIO for
// an error without one (a failed system call, say), and "" for nil.
func CodeOf(err error) Code { return format.CodeOf(err) }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, msg string, args ...any) error { return format.Errorf(code, msg, args...) }

// IsClean reports whether s is usable as an ID unchanged.
func IsClean(s string) bool { return format.IsClean(s) }

// Sanitize maps a call id (or run id) to an ID. An id that is already clean
// is used unchanged; any other has each disallowed byte replaced by "_", is
// cut to 55 bytes and gets "-" plus the first 8 hex digits of the XXH3-64 of
// the original appended, so distinct inputs stay distinct. The empty string
// is an error.
func Sanitize(s string) (ID, error) { return format.Sanitize(s) }

// WithHint returns err with hint, keeping err's code.
func WithHint(err error, hint string) error { return format.WithHint(err, hint) }

// The read log's bound on a field, and on a record's tool name.
var logField = format.LogField

const maxLogTool = format.MaxLogTool

// MaxDescriptorSize bounds a descriptor file: retain never writes a larger
// one (it bounds the call id and tool name it keeps), and a reader refuses
// one as corrupt rather than read it whole.
const MaxDescriptorSize = format.MaxDescriptorSize
