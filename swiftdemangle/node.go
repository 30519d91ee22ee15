package swiftdemangle

import "strconv"

// Kind is the kind of a Node, as Swift's demangler names it
// (Class, Function, Identifier, ...).
type Kind uint16

// String returns the kind's name, e.g. "Function".
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func isContext(k Kind) bool { return int(k) < len(contextKinds) && contextKinds[k] }

type payload uint8

const (
	payloadNone payload = iota
	payloadText
	payloadIndex
)

// Node is one node of a demangled symbol's tree, shaped like the nodes of
// Swift's own demangler: a kind, an optional text or index payload, and
// children. Trees returned by Parse share subtrees (substitutions), so they
// are DAGs; treat them as read-only. A tree is safe for concurrent reads.
type Node struct {
	Kind     Kind
	Text     string // payload of identifier-like kinds, when HasText
	Index    uint64 // payload of index-like kinds, when HasIndex
	Children []*Node
	payload  payload
}

// HasText reports whether the node carries a text payload.
func (n *Node) HasText() bool { return n.payload == payloadText }

// HasIndex reports whether the node carries an index payload.
func (n *Node) HasIndex() bool { return n.payload == payloadIndex }

// child, firstChild and the like stay within the inlining budget of the
// printer's big functions, which call them for nearly every node.
func (n *Node) child(i int) *Node {
	if n == nil || uint(i) >= uint(len(n.Children)) {
		return nil
	}
	return n.Children[i]
}

func (n *Node) firstChild() *Node {
	if n == nil || len(n.Children) == 0 {
		return nil
	}
	return n.Children[0]
}

func (n *Node) lastChild() *Node {
	if n == nil || len(n.Children) == 0 {
		return nil
	}
	return n.Children[len(n.Children)-1]
}

func (n *Node) numChildren() int {
	if n == nil {
		return 0
	}
	return len(n.Children)
}

func (n *Node) kind() Kind {
	if n == nil {
		return KindUnknown
	}
	return n.Kind
}

func (n *Node) text() string {
	if n == nil {
		return ""
	}
	return n.Text
}

func (n *Node) reverseChildren(from int) {
	c := n.Children
	if from >= len(c) {
		return
	}
	for i, j := from, len(c)-1; i < j; i, j = i+1, j-1 {
		c[i], c[j] = c[j], c[i]
	}
}

func (n *Node) removeChildAt(i int) {
	n.Children = append(n.Children[:i:i], n.Children[i+1:]...)
}
