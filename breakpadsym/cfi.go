package breakpadsym

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/unwind"
)

// CFIRule is the rule in force for one register: how to compute the
// value it had in the caller.
type CFIRule struct {
	// Register is ".cfa", ".ra", or a register's name without the "$"
	// that x86 files write ("rsp", "rbp", "esp"; "sp", "x29", "x30" in
	// arm64 files from dump_syms for Mach-O, "r7", "lr" for arm).
	Register string
	// Expr is a Breakpad postfix expression, as written.
	Expr string
}

// CFIRules is the row of the STACK CFI table for one address: the rules of
// the STACK CFI INIT record covering it, updated by the STACK CFI records
// at or below it, in order. A CFIRules is not modified after CFIRules
// returns it, so it is safe for concurrent use.
type CFIRules struct {
	Address uint64    // the address asked about, module-relative
	Start   uint64    // the STACK CFI INIT record's address
	Size    uint64    // and size
	Rules   []CFIRule // in the order the registers first appear
}

// CFIRules returns the STACK CFI rules in force at the module-relative
// address addr, or false when no STACK CFI INIT record covers it.
func (f *File) CFIRules(addr uint64) (*CFIRules, bool) {
	i := sort.Search(len(f.cfi), func(i int) bool { return f.cfi[i].address > addr }) - 1
	if i < 0 || addr-f.cfi[i].address >= f.cfi[i].size {
		return nil, false
	}
	init := &f.cfi[i]
	r := &CFIRules{Address: addr, Start: init.address, Size: init.size}
	r.apply(init.rules)
	for _, d := range init.deltas {
		if d.address > addr {
			break
		}
		r.apply(d.rules)
	}
	return r, true
}

// Rule returns the expression for register reg (".cfa", ".ra", or a name
// without "$").
func (r *CFIRules) Rule(reg string) (string, bool) {
	for _, rule := range r.Rules {
		if rule.Register == reg {
			return rule.Expr, true
		}
	}
	return "", false
}

// apply adds or replaces the rules of one record; the parser has checked
// them with checkRules.
func (r *CFIRules) apply(rules string) {
	forEachRule(rules, func(reg, expr string) {
		for i := range r.Rules {
			if r.Rules[i].Register == reg {
				r.Rules[i].Expr = expr
				return
			}
		}
		if len(r.Rules) >= maxRegisters+2 && reg != ".cfa" && reg != ".ra" {
			return // no architecture has this many registers: a hostile file
		}
		r.Rules = append(r.Rules, CFIRule{Register: reg, Expr: expr})
	})
}

// forEachRule calls fn for each "REG: EXPR" pair of a record's rules, with
// the register's "$" and ":" removed. It returns a message when the text
// is not a sequence of such pairs with non-empty expressions.
func forEachRule(rules string, fn func(reg, expr string)) string {
	rest := strings.TrimSpace(rules)
	if rest == "" {
		return "no rules"
	}
	for rest != "" {
		var regTok string
		regTok, rest = cut(rest)
		if len(regTok) < 2 || !strings.HasSuffix(regTok, ":") {
			return fmt.Sprintf("%q is not a register name followed by a colon", regTok)
		}
		// The expression runs to the next token that ends with a colon.
		end := len(rest)
		for i := 0; i < len(rest); {
			j := strings.IndexByte(rest[i:], ' ')
			tokEnd := len(rest)
			if j >= 0 {
				tokEnd = i + j
			}
			if tokEnd > i && rest[tokEnd-1] == ':' {
				end = i
				break
			}
			if j < 0 {
				break
			}
			i = tokEnd + 1
		}
		expr := strings.TrimRight(rest[:end], " ")
		rest = rest[end:]
		if expr == "" {
			return fmt.Sprintf("register %s has no expression", regTok)
		}
		if len(expr) > maxExprLen {
			return fmt.Sprintf("expression for %s is %d bytes, more than %d", regTok, len(expr), maxExprLen)
		}
		if fn != nil {
			fn(strings.TrimPrefix(regTok[:len(regTok)-1], "$"), expr)
		}
	}
	return ""
}

// checkRules returns a message when a record's rules are malformed.
func checkRules(rules string) string { return forEachRule(rules, nil) }

// Limits that keep evaluation bounded whatever the file says.
const (
	maxExprLen   = 1024 // bytes in one rule's expression
	maxStack     = 64   // postfix stack depth
	maxVariables = 16   // distinct names assigned with "=" in one expression
	// maxRegisters bounds the registers a rule set names (besides .cfa and
	// .ra), so that building one stays linear in the records applied.
	maxRegisters = 128
)

// EvalError reports why a rule could not be evaluated.
type EvalError struct {
	Register string // ".cfa", ".ra" or a register name
	Expr     string
	Msg      string
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("breakpadsym: CFI rule %s: %q: %s", e.Register, e.Expr, e.Msg)
}

// RegisterFunc returns the callee's value of a register, named without
// "$" ("rsp", "sp", "x29", ...), and whether it is known.
type RegisterFunc func(name string) (uint64, bool)

// ReadMemFunc reads a size-byte little-endian value at addr.
type ReadMemFunc func(addr uint64, size int) (uint64, error)

// Memory is memory read as the walker reads it: unwind.Memory.
type Memory = unwind.Memory

// MemoryFunc adapts a Memory to a ReadMemFunc that reads little-endian
// values of 4 or 8 bytes (every architecture Breakpad's CFI describes on
// Apple platforms is little-endian).
func MemoryFunc(m Memory) ReadMemFunc {
	return func(addr uint64, size int) (uint64, error) {
		var buf [8]byte
		if size != 4 && size != 8 {
			return 0, fmt.Errorf("breakpadsym: read of %d bytes: want 4 or 8", size)
		}
		if m == nil {
			return 0, fmt.Errorf("breakpadsym: read at %#x: no memory (nil Memory)", addr)
		}
		n, err := m.ReadMemory(buf[:size], addr)
		if n < size {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if size == 4 {
			return uint64(binary.LittleEndian.Uint32(buf[:4])), nil
		}
		return binary.LittleEndian.Uint64(buf[:]), nil
	}
}

// MapRegisters adapts a map of register values to a RegisterFunc.
func MapRegisters(regs map[string]uint64) RegisterFunc {
	return func(name string) (uint64, bool) {
		v, ok := regs[name]
		return v, ok
	}
}

// Eval computes the caller's registers from the callee's: first the
// .cfa rule (which may not use .cfa), then .ra and every other rule (which
// may). Register names in expressions are the callee's values, read with
// regs; "^" reads ptrSize bytes (4 or 8) with readMem; results wrap at
// ptrSize bytes.
//
// The result holds ".cfa", ".ra" and each register whose rule evaluated;
// a register whose rule is ".undef" or fails to evaluate (for example an
// unreadable stack slot) is left out, since an unwinder can go on without
// it. The error is an *EvalError when .cfa or .ra is missing, .undef or
// cannot be evaluated. Breakpad's convention is that when no rule gives
// the stack pointer, the caller's stack pointer is .cfa: the caller of
// Eval applies it, because only it knows which name is the stack pointer.
func (r *CFIRules) Eval(regs RegisterFunc, readMem ReadMemFunc, ptrSize int) (map[string]uint64, error) {
	if ptrSize != 4 && ptrSize != 8 {
		return nil, &EvalError{Register: ".cfa", Msg: fmt.Sprintf("pointer size %d is neither 4 nor 8", ptrSize)}
	}
	ev := evaluator{regs: regs, readMem: readMem, ptrSize: ptrSize}
	must := func(reg string) (uint64, error) {
		expr, ok := r.Rule(reg)
		if !ok {
			return 0, &EvalError{Register: reg, Msg: "no rule"}
		}
		v, undef, err := ev.eval(expr)
		if err == nil && undef {
			err = fmt.Errorf(".undef")
		}
		if err != nil {
			return 0, &EvalError{Register: reg, Expr: expr, Msg: err.Error()}
		}
		return v, nil
	}
	cfa, err := must(".cfa")
	if err != nil {
		return nil, err
	}
	ev.cfa, ev.haveCFA = cfa, true
	ra, err := must(".ra")
	if err != nil {
		return nil, err
	}
	caller := make(map[string]uint64, len(r.Rules))
	caller[".cfa"], caller[".ra"] = cfa, ra
	for _, rule := range r.Rules {
		if rule.Register == ".cfa" || rule.Register == ".ra" {
			continue
		}
		if v, undef, err := ev.eval(rule.Expr); err == nil && !undef {
			caller[rule.Register] = v
		}
	}
	return caller, nil
}

// ExprEnv is what EvalExpr evaluates an expression against.
type ExprEnv struct {
	Regs    RegisterFunc // the callee's registers, by name
	ReadMem ReadMemFunc  // as for Eval
	PtrSize int          // 4 or 8, as for Eval
	// CFA is the value of ".cfa" when HasCFA is set; a .cfa rule's own
	// expression has none.
	CFA    uint64
	HasCFA bool
}

// EvalExpr evaluates one postfix expression of a rule on its own, for an
// unwinder that applies rules register by register. undef reports an
// expression that is ".undef". The limits of Eval apply.
func EvalExpr(expr string, env ExprEnv) (val uint64, undef bool, err error) {
	if env.PtrSize != 4 && env.PtrSize != 8 {
		return 0, false, fmt.Errorf("breakpadsym: pointer size %d is neither 4 nor 8", env.PtrSize)
	}
	ev := evaluator{regs: env.Regs, readMem: env.ReadMem, ptrSize: env.PtrSize, cfa: env.CFA, haveCFA: env.HasCFA}
	return ev.eval(expr)
}

// evaluator evaluates Breakpad postfix expressions.
type evaluator struct {
	regs    RegisterFunc
	readMem ReadMemFunc
	ptrSize int
	cfa     uint64
	haveCFA bool
}

// operand is a postfix stack entry: a value, or a name not yet read (the
// left side of "=" must stay a name).
type operand struct {
	val  uint64
	name string
}

// Eval evaluates one postfix expression. Tokens are separated by spaces:
// decimal numbers (optionally negative) or 0x-prefixed hex numbers;
// ".cfa"; ".undef", which makes the result undefined; the binary operators
// + - * / % (unsigned), "@" (align: a b @ is a & -b) and "=" (assign the
// right value to the name on the left, for later tokens); the unary "^"
// (read memory); anything else is a register or variable name, with any
// leading "$" removed. The expression must leave exactly one value.
func (ev *evaluator) eval(expr string) (val uint64, undef bool, err error) {
	if len(expr) > maxExprLen {
		return 0, false, fmt.Errorf("expression longer than %d bytes", maxExprLen)
	}
	mask := ^uint64(0)
	if ev.ptrSize == 4 {
		mask = 1<<32 - 1
	}
	var stack [maxStack]operand
	sp := 0
	var vars []operand // assigned names, at most maxVariables
	value := func(o operand) (uint64, error) {
		if o.name == "" {
			return o.val, nil
		}
		for _, v := range vars {
			if v.name == o.name {
				return v.val, nil
			}
		}
		if ev.regs != nil {
			if v, ok := ev.regs(o.name); ok {
				return v & mask, nil
			}
		}
		return 0, fmt.Errorf("register %q unknown", o.name)
	}
	pop := func() (uint64, error) {
		if sp == 0 {
			return 0, fmt.Errorf("operator needs more operands")
		}
		sp--
		return value(stack[sp])
	}
	push := func(o operand) error {
		if sp == len(stack) {
			return fmt.Errorf("stack deeper than %d", maxStack)
		}
		stack[sp] = o
		sp++
		return nil
	}

	for rest := strings.TrimSpace(expr); rest != ""; {
		var tok string
		tok, rest = cut(rest)
		switch tok {
		case "+", "-", "*", "/", "%", "@":
			b, err := pop()
			if err != nil {
				return 0, false, err
			}
			a, err := pop()
			if err != nil {
				return 0, false, err
			}
			var v uint64
			switch tok {
			case "+":
				v = a + b
			case "-":
				v = a - b
			case "*":
				v = a * b
			case "/", "%":
				if b == 0 {
					return 0, false, fmt.Errorf("division by zero")
				}
				if tok == "/" {
					v = a / b
				} else {
					v = a % b
				}
			case "@":
				if b == 0 {
					return 0, false, fmt.Errorf("alignment to 0")
				}
				v = a & -b
			}
			if err := push(operand{val: v & mask}); err != nil {
				return 0, false, err
			}
		case "^":
			a, err := pop()
			if err != nil {
				return 0, false, err
			}
			if ev.readMem == nil {
				return 0, false, fmt.Errorf("no memory to read at %#x", a)
			}
			v, err := ev.readMem(a, ev.ptrSize)
			if err != nil {
				return 0, false, fmt.Errorf("reading %d bytes at %#x: %v", ev.ptrSize, a, err)
			}
			if err := push(operand{val: v & mask}); err != nil {
				return 0, false, err
			}
		case "=":
			b, err := pop()
			if err != nil {
				return 0, false, err
			}
			if sp == 0 || stack[sp-1].name == "" {
				return 0, false, fmt.Errorf("= needs a name on its left")
			}
			sp--
			name := stack[sp].name
			assigned := false
			for i := range vars {
				if vars[i].name == name {
					vars[i].val, assigned = b, true
				}
			}
			if !assigned {
				if len(vars) == maxVariables {
					return 0, false, fmt.Errorf("more than %d variables", maxVariables)
				}
				vars = append(vars, operand{name: name, val: b})
			}
		case ".cfa":
			if !ev.haveCFA {
				return 0, false, fmt.Errorf(".cfa used before it is known")
			}
			if err := push(operand{val: ev.cfa}); err != nil {
				return 0, false, err
			}
		case ".undef":
			return 0, true, nil
		default:
			o, err := parseOperand(tok)
			if err != nil {
				return 0, false, err
			}
			o.val &= mask
			if err := push(o); err != nil {
				return 0, false, err
			}
		}
	}
	if sp != 1 {
		return 0, false, fmt.Errorf("expression leaves %d values, want 1", sp)
	}
	v, err := value(stack[0])
	return v, false, err
}

// parseOperand reads a number or a name.
func parseOperand(tok string) (operand, error) {
	c := tok[0]
	if c == '-' || c >= '0' && c <= '9' {
		if strings.HasPrefix(tok, "0x") || strings.HasPrefix(tok, "0X") {
			v, err := strconv.ParseUint(tok[2:], 16, 64)
			if err != nil {
				return operand{}, fmt.Errorf("bad number %q", tok)
			}
			return operand{val: v}, nil
		}
		if c == '-' {
			v, err := strconv.ParseInt(tok, 10, 64)
			if err != nil {
				return operand{}, fmt.Errorf("bad number %q", tok)
			}
			return operand{val: uint64(v)}, nil
		}
		v, err := strconv.ParseUint(tok, 10, 64)
		if err != nil {
			return operand{}, fmt.Errorf("bad number %q", tok)
		}
		return operand{val: v}, nil
	}
	name := strings.TrimPrefix(tok, "$")
	if name == "" {
		return operand{}, fmt.Errorf("bad token %q", tok)
	}
	return operand{name: name}, nil
}
