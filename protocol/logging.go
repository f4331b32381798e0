package protocol

// Log levels, RFC 5424 order.
const (
	levelDebug = iota
	levelInfo
	levelNotice
	levelWarning
	levelError
	levelCritical
	levelAlert
	levelEmergency
	levelNone // the modern era without a logLevel in _meta: no logs
)

var levelNames = map[string]int{
	"debug": levelDebug, "info": levelInfo, "notice": levelNotice, "warning": levelWarning,
	"error": levelError, "critical": levelCritical, "alert": levelAlert, "emergency": levelEmergency,
}

func parseLevel(s string) (int, bool) {
	l, ok := levelNames[s]
	return l, ok
}
