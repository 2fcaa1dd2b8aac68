package pipeline

// IsRetryable tells the external tests whether an error is retried.
var IsRetryable = isRetryable
