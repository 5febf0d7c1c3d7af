// Package lint holds no code: its test holds the tree's doc-comment rules,
// so a renamed function cannot keep a comment that names its old self and
// an exported name cannot go undocumented.
package lint
