// The Go half of judge_go.py: parses and type-checks a Go project with the standard
// library's go/parser, go/build and go/types (the type checker gopls itself uses) and prints
// JSON: files, definitions, every use of every definition, identifier counts, imports.
// judge_go.py's header documents the fields.
//
// Usage: GO111MODULE=off GOPATH=<dir> go run judge_go.go <GOPATH>/src/<import path>
// (the project copied into a GOPATH layout, so go/build's source importer finds its
// packages; standard library only, no network).
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type Def struct {
	Name          string `json:"name"`
	QualifiedName string `json:"qualified_name"`
	Kind          string `json:"kind"`
	Path          string `json:"path"`
	Line          int    `json:"line"`
	Column        int    `json:"column"`
}

type Pos struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Spec string `json:"spec"`
	Line int    `json:"line"`
}

type Out struct {
	GoVersion   string              `json:"go"`
	Files       []string            `json:"files"`
	Excluded    []string            `json:"files_excluded_by_build_constraints"`
	Definitions []Def               `json:"definitions"`
	Uses        map[string][]Pos    `json:"uses"`
	Counts      map[string]int      `json:"counts"`
	Imports     []Edge              `json:"imports"`
	TypeErrors  []string            `json:"type_errors"`
	Units       map[string][]string `json:"units"`
}

var (
	root, importPath string
	fset             = token.NewFileSet()
	lineCache        = map[string][]string{}
)

func rel(filename string) string {
	r, err := filepath.Rel(root, filename)
	if err != nil || strings.HasPrefix(r, "..") {
		return ""
	}
	return filepath.ToSlash(r)
}

func pos(p token.Pos) Pos {
	// Column: go/token counts bytes; convert to characters (code points).
	position := fset.Position(p)
	col := position.Column
	lines, ok := lineCache[position.Filename]
	if !ok {
		if data, err := os.ReadFile(position.Filename); err == nil {
			lines = strings.SplitAfter(string(data), "\n")
		}
		lineCache[position.Filename] = lines
	}
	{
		if position.Line-1 < len(lines) {
			l := lines[position.Line-1]
			if position.Column-1 <= len(l) {
				col = len([]rune(l[:position.Column-1])) + 1
			}
		}
	}
	return Pos{rel(position.Filename), position.Line, col}
}

func key(p Pos) string { return fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Column) }

func recvName(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

func main() {
	var err error
	root, err = filepath.Abs(os.Args[1])
	if err != nil {
		panic(err)
	}
	gopath := os.Getenv("GOPATH")
	importPath = filepath.ToSlash(strings.TrimPrefix(root, filepath.Join(gopath, "src")+string(filepath.Separator)))
	out := Out{GoVersion: strings.TrimPrefix(build.Default.ReleaseTags[len(build.Default.ReleaseTags)-1], "go"),
		Uses: map[string][]Pos{}, Counts: map[string]int{}, Units: map[string][]string{}}

	// Directories with .go files; testdata and dot-directories skipped (as the go tool does;
	// underscore directories such as _tools are kept: docdex indexes them too).
	var dirs []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if p != root && (info.Name() == "testdata" || strings.HasPrefix(info.Name(), ".")) {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)

	ctx := build.Default
	imp := importer.ForCompiler(fset, "source", nil)
	for _, dir := range dirs {
		entries, _ := os.ReadDir(dir)
		// unit name -> files: the package with its in-package tests, and the external
		// test package (package x_test) on its own.
		units := map[string][]*ast.File{}
		var order []string
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			full := filepath.Join(dir, e.Name())
			if ok, _ := ctx.MatchFile(dir, e.Name()); !ok {
				out.Excluded = append(out.Excluded, rel(full))
				continue
			}
			f, err := parser.ParseFile(fset, full, nil, parser.ParseComments)
			if err != nil {
				out.TypeErrors = append(out.TypeErrors, err.Error())
				continue
			}
			out.Files = append(out.Files, rel(full))
			u := f.Name.Name
			if _, ok := units[u]; !ok {
				order = append(order, u)
			}
			units[u] = append(units[u], f)
		}
		for _, u := range order {
			files := units[u]
			pkgPath := importPath
			if r := rel(dir); r != "." {
				pkgPath = importPath + "/" + r
			}
			if strings.HasSuffix(u, "_test") {
				pkgPath += "_test"
			}
			info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
			conf := types.Config{Importer: imp, Error: func(err error) {
				out.TypeErrors = append(out.TypeErrors, err.Error())
			}}
			conf.Check(pkgPath, fset, files, info)
			var names []string
			for _, f := range files {
				names = append(names, rel(fset.Position(f.Pos()).Filename))
			}
			out.Units[pkgPath] = names

			for _, f := range files {
				definitions(f, u, &out)
				for _, is := range f.Imports {
					spec := strings.Trim(is.Path.Value, "\"`")
					if spec == importPath || strings.HasPrefix(spec, importPath+"/") {
						to := strings.TrimPrefix(strings.TrimPrefix(spec, importPath), "/")
						if to == "" {
							to = "."
						}
						p := pos(is.Pos())
						out.Imports = append(out.Imports, Edge{From: p.Path, To: to, Spec: spec, Line: p.Line})
					}
				}
			}
			// Every use of a project-level object, keyed by the object's declaration
			// position (objects reached through the source importer are other instances of
			// the same declarations; the position identifies them).
			for id, obj := range info.Uses {
				if obj == nil || !obj.Pos().IsValid() || obj.Pkg() == nil {
					continue
				}
				dp := pos(obj.Pos())
				if dp.Path == "" {
					continue
				}
				up := pos(id.Pos())
				if up.Path == "" {
					continue
				}
				k := key(dp)
				out.Uses[k] = append(out.Uses[k], up)
			}
		}
	}
	for k := range out.Uses {
		u := out.Uses[k]
		sort.Slice(u, func(i, j int) bool { return key(u[i]) < key(u[j]) })
		dedup := u[:0]
		for i, x := range u {
			if i == 0 || key(x) != key(u[i-1]) {
				dedup = append(dedup, x)
			}
		}
		out.Uses[k] = dedup
	}
	for _, f := range out.Files {
		data, _ := os.ReadFile(filepath.Join(root, f))
		var s scanner.Scanner
		file := token.NewFileSet().AddFile(f, -1, len(data))
		s.Init(file, data, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.IDENT {
				out.Counts[lit]++
			}
		}
	}
	sort.Slice(out.Definitions, func(i, j int) bool {
		a, b := out.Definitions[i], out.Definitions[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	sort.Strings(out.Files)
	sort.Strings(out.Excluded)
	sort.Slice(out.Imports, func(i, j int) bool {
		a, b := out.Imports[i], out.Imports[j]
		return a.From+"\x00"+a.To < b.From+"\x00"+b.To
	})
	enc := json.NewEncoder(os.Stdout)
	enc.Encode(out)
}

// Package-level declarations: functions, methods, types, vars, consts.
func definitions(f *ast.File, pkg string, out *Out) {
	add := func(id *ast.Ident, qn, kind string) {
		if id == nil || id.Name == "_" {
			return
		}
		p := pos(id.Pos())
		out.Definitions = append(out.Definitions, Def{id.Name, qn, kind, p.Path, p.Line, p.Column})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil && len(d.Recv.List) > 0 {
				add(d.Name, pkg+"."+recvName(d)+"."+d.Name.Name, "method")
			} else {
				add(d.Name, pkg+"."+d.Name.Name, "function")
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					kind := "type"
					switch s.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
					}
					add(s.Name, pkg+"."+s.Name.Name, kind)
				case *ast.ValueSpec:
					kind := "variable"
					if d.Tok == token.CONST {
						kind = "constant"
					}
					for _, n := range s.Names {
						add(n, pkg+"."+n.Name, kind)
					}
				}
			}
		}
	}
}
