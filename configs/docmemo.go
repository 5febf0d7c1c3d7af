package configs

import (
	"reflect"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A sweep loads its base configs once per point (10^4 points and more:
// issue 35 item 3), and most of a load was parsing and checking the same
// built-in file again. checkedDocument keeps each file's checked tree,
// by its label and the SHA-256 of its bytes, and hands out copies: the
// merge edits the tree it gets (mergeNode, mergeBase).

type docKey struct {
	label string
	sum   [32]byte
}

var (
	docMu   sync.Mutex
	docMemo = map[docKey]*yaml.Node{}
)

// docMemoMax bounds the memo: the built-in configs and a sweep's few
// overlays.
const docMemoMax = 64

// checkedDocument is ParseDocument and the schema check of a config
// file's bytes; sum is their SHA-256.
func checkedDocument(data []byte, label string, sum [32]byte) (*yaml.Node, error) {
	k := docKey{label, sum}
	docMu.Lock()
	n, ok := docMemo[k]
	docMu.Unlock()
	if ok {
		return copyNode(n), nil
	}
	root, err := ParseDocument(data, label)
	if err != nil {
		return nil, err
	}
	if err := checkNode(label, root, reflect.TypeOf(Config{}), ""); err != nil {
		return nil, err
	}
	if hasAlias(root) { // an alias would point into the kept tree
		return root, nil
	}
	docMu.Lock()
	if len(docMemo) < docMemoMax {
		docMemo[k] = copyNode(root)
	}
	docMu.Unlock()
	return root, nil
}

func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = copyNode(x)
		}
	}
	return &c
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		return true
	}
	for _, x := range n.Content {
		if hasAlias(x) {
			return true
		}
	}
	return false
}
