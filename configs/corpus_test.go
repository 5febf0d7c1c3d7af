package configs

import "strconv"

// goQuote is how the fuzz corpus files write a string.
func goQuote(s string) string { return strconv.Quote(s) }
