package config

import (
	"fmt"
	"strings"
)

// suggest names the known key that an unknown one is probably a typo of.
func suggest(key string, known []string) string {
	for _, k := range known {
		short := k[strings.LastIndexByte(k, '.')+1:]
		if strings.EqualFold(short, key) || editDistance(strings.ToLower(short), strings.ToLower(key)) <= 2 {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
