// Command funcs reads Go source files with go/parser and go/scanner for benches/impact/go/judge.py
// (standard library only; built by judge.py with the Go it runs the tests with).
//
//	funcs FILE...      prints a JSON list, one object per file:
//	  {"file", "package", "generated", "functions": [{"name", "recv", "line", "end_line",
//	    "lbrace": [line, col], "rbrace": [line, col]}], "stmts": [[line, col], ...],
//	   "unsafe_lines": [...], "tests": [{"name", "line"}]}
//	  functions: every function declaration with a body (a method's "recv" is its receiver's base
//	  type: pointer and type parameters stripped); stmts: where each statement inside a function
//	  body starts (func literals included: they are part of the function they are written in);
//	  unsafe_lines: lines whose end lies inside a token that goes on to the next line (a raw
//	  string or a block comment), where an appended line comment would not be a comment;
//	  tests: top-level `func TestXxx(t *testing.T)` (what `go test -run` runs).
//	funcs -check        reads [[file, line], ...] as JSON on stdin and prints, for each, whether
//	  appending " // docdex-probe" to that line leaves the file's tokens (comments aside) exactly
//	  as they were and the file still parses: a comment-only edit.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

type fn struct {
	Name    string `json:"name"`
	Recv    string `json:"recv"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	Lbrace  [2]int `json:"lbrace"`
	Rbrace  [2]int `json:"rbrace"`
}

type test struct {
	Name string `json:"name"`
	Line int    `json:"line"`
}

type fileInfo struct {
	File        string   `json:"file"`
	Package     string   `json:"package"`
	Generated   bool     `json:"generated"`
	Functions   []fn     `json:"functions"`
	Stmts       [][2]int `json:"stmts"`
	UnsafeLines []int    `json:"unsafe_lines"`
	Tests       []test   `json:"tests"`
	Error       string   `json:"error,omitempty"`
}

var generated = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

func recvBase(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

func isTestName(name string) bool {
	if !strings.HasPrefix(name, "Test") {
		return false
	}
	if len(name) == 4 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[4:])
	return !unicode.IsLower(r)
}

func pos(fset *token.FileSet, p token.Pos) [2]int {
	q := fset.Position(p)
	return [2]int{q.Line, q.Column}
}

func read(path string) fileInfo {
	info := fileInfo{File: path, Functions: []fn{}, Stmts: [][2]int{}, UnsafeLines: []int{}, Tests: []test{}}
	src, err := os.ReadFile(path)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		info.Error = err.Error()
		return info
	}
	info.Package = f.Name.Name
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if generated.MatchString(c.Text) {
				info.Generated = true
			}
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		r := fn{Name: fd.Name.Name, Line: fset.Position(fd.Pos()).Line,
			EndLine: fset.Position(fd.End()).Line,
			Lbrace:  pos(fset, fd.Body.Lbrace), Rbrace: pos(fset, fd.Body.Rbrace)}
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			r.Recv = recvBase(fd.Recv.List[0].Type)
		} else if isTestName(fd.Name.Name) && len(fd.Type.Params.List) == 1 {
			if se, ok := fd.Type.Params.List[0].Type.(*ast.StarExpr); ok {
				if sel, ok := se.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "T" {
					info.Tests = append(info.Tests, test{fd.Name.Name, r.Line})
				}
			}
		}
		info.Functions = append(info.Functions, r)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if s, ok := n.(ast.Stmt); ok {
				if _, block := s.(*ast.BlockStmt); !block {
					info.Stmts = append(info.Stmts, pos(fset, s.Pos()))
				}
			}
			return true
		})
	}
	// lines whose end is inside a token that spans lines
	var sc scanner.Scanner
	sfset := token.NewFileSet()
	tf := sfset.AddFile(path, -1, len(src))
	sc.Init(tf, src, nil, scanner.ScanComments)
	for {
		p, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if (tok == token.STRING || tok == token.COMMENT) && strings.Contains(lit, "\n") {
			start := sfset.Position(p).Line
			end := start + strings.Count(lit, "\n")
			for l := start; l < end; l++ {
				info.UnsafeLines = append(info.UnsafeLines, l)
			}
		}
	}
	return info
}

type tk struct {
	tok token.Token
	lit string
}

func tokens(src []byte) ([]tk, error) {
	var errs scanner.ErrorList
	var sc scanner.Scanner
	fset := token.NewFileSet()
	tf := fset.AddFile("x.go", -1, len(src))
	sc.Init(tf, src, func(p token.Position, msg string) { errs.Add(p, msg) }, 0)
	var out []tk
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		out = append(out, tk{tok, lit})
	}
	return out, errs.Err()
}

func check(path string, line int) (bool, string) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err.Error()
	}
	lines := bytes.Split(src, []byte("\n"))
	if line < 1 || line > len(lines) {
		return false, "no such line"
	}
	edited := make([][]byte, len(lines))
	copy(edited, lines)
	l := bytes.TrimRight(lines[line-1], "\r")
	edited[line-1] = append(append([]byte{}, l...), []byte(" // docdex-probe")...)
	if len(l) != len(lines[line-1]) {
		edited[line-1] = append(edited[line-1], '\r')
	}
	esrc := bytes.Join(edited, []byte("\n"))
	a, err := tokens(src)
	if err != nil {
		return false, "original: " + err.Error()
	}
	b, err := tokens(esrc)
	if err != nil {
		return false, "edited: " + err.Error()
	}
	if len(a) != len(b) {
		return false, "token count differs"
	}
	for i := range a {
		if a[i] != b[i] {
			return false, fmt.Sprintf("token %d differs", i)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), path, esrc, parser.AllErrors); err != nil {
		return false, "edited does not parse: " + err.Error()
	}
	return true, ""
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	if len(os.Args) > 1 && os.Args[1] == "-check" {
		var req [][2]json.RawMessage
		if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		type res struct {
			OK  bool   `json:"ok"`
			Why string `json:"why,omitempty"`
		}
		out := []res{}
		for _, r := range req {
			var path string
			var line int
			if json.Unmarshal(r[0], &path) != nil || json.Unmarshal(r[1], &line) != nil {
				fmt.Fprintln(os.Stderr, "bad request")
				os.Exit(2)
			}
			ok, why := check(path, line)
			out = append(out, res{ok, why})
		}
		enc.Encode(out)
		return
	}
	out := []fileInfo{}
	for _, path := range os.Args[1:] {
		out = append(out, read(path))
	}
	enc.Encode(out)
}
