// The TypeScript half of judge_typescript.py: every call to the `typescript` package's
// language service is here (judge_typescript.py's header documents the fields).
// Usage: node judge_typescript_ls.js scan ROOT          -> JSON on stdout
//        node judge_typescript_ls.js refs ROOT < sample -> JSON on stdout
// with NODE_PATH pointing at the node_modules that holds typescript.
"use strict";
const ts = require("typescript");
const fs = require("fs");
const path = require("path");

const [cmd, rootArg] = process.argv.slice(2);
const ROOT = fs.realpathSync(rootArg);

// No tsconfig ships with the npm tarballs: fixed options, module resolution "bundler"
// (extensionless relative specifiers, index files, package.json "exports").
const OPTIONS = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  jsx: ts.JsxEmit.Preserve,
  allowJs: false,
  strict: true,
  experimentalDecorators: false,
  skipLibCheck: true,
  noEmit: true,
  types: [],
};

function walkFiles(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".")) walkFiles(p, out);
    } else if (/\.(ts|tsx|mts|cts)$/.test(e.name)) out.push(p);
  }
  return out;
}

const FILES = walkFiles(ROOT, []).sort();
const rel = (p) => path.relative(ROOT, p).split(path.sep).join("/");
const inRoot = (p) => {
  const r = path.relative(ROOT, p);
  return !r.startsWith("..") && !path.isAbsolute(r) && !r.split(path.sep).includes("node_modules");
};

const texts = new Map();
const read = (f) => {
  if (!texts.has(f)) texts.set(f, fs.readFileSync(f, "utf8"));
  return texts.get(f);
};
const host = {
  getScriptFileNames: () => FILES,
  getScriptVersion: () => "1",
  getScriptSnapshot: (f) => (fs.existsSync(f) ? ts.ScriptSnapshot.fromString(read(f)) : undefined),
  getCurrentDirectory: () => ROOT,
  getCompilationSettings: () => OPTIONS,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const ls = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = ls.getProgram();

// 1-based line and 1-based column in characters (code points), from an offset.
function loc(file, pos) {
  const sf = program.getSourceFile(file);
  const lc = sf.getLineAndCharacterOfPosition(pos);
  const lineStart = sf.getPositionOfLineAndCharacter(lc.line, 0);
  const col = Array.from(sf.text.slice(lineStart, lineStart + lc.character)).length + 1;
  return { line: lc.line + 1, column: col };
}

const isFn = (e) => e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));

// Declaration node of one navigation-tree span: the innermost node starting at span.start
// whose extent equals the span.
function nodeAtSpan(sf, span) {
  let found;
  const visit = (n) => {
    if (n.getStart(sf) <= span.start && n.end >= span.start + span.length) {
      if (n.getStart(sf) === span.start || n.pos === span.start) found = n;
      ts.forEachChild(n, visit);
    }
  };
  visit(sf);
  // walk up to the declaration kinds we know
  let n = found;
  while (n && !KIND_OF[n.kind] && n.kind !== ts.SyntaxKind.VariableDeclaration && n.kind !== ts.SyntaxKind.PropertyDeclaration) n = n.parent;
  return n;
}

const K = ts.SyntaxKind;
const KIND_OF = {
  [K.FunctionDeclaration]: "function",
  [K.ClassDeclaration]: "class",
  [K.InterfaceDeclaration]: "interface",
  [K.TypeAliasDeclaration]: "type",
  [K.EnumDeclaration]: "enum",
  [K.ModuleDeclaration]: "namespace",
  [K.MethodDeclaration]: "method",
  [K.GetAccessor]: "method",
  [K.SetAccessor]: "method",
};

function moduleLevel(decl) {
  // VariableDeclaration -> VariableDeclarationList -> VariableStatement -> SourceFile|ModuleBlock
  const stmt = decl.parent && decl.parent.parent;
  return stmt && stmt.parent && (ts.isSourceFile(stmt.parent) || ts.isModuleBlock(stmt.parent));
}

function definitions() {
  const defs = [];
  const seen = new Set();
  for (const file of FILES) {
    const sf = program.getSourceFile(file);
    const visit = (item, containers) => {
      for (const span of item.spans || []) {
        if (!item.nameSpan) break;
        const node = nodeAtSpan(sf, span);
        if (!node || !node.name || !ts.isIdentifier(node.name)) continue;
        let kind = KIND_OF[node.kind];
        if (node.kind === K.VariableDeclaration) {
          kind = moduleLevel(node) ? (isFn(node.initializer) ? "function" : "variable") : undefined;
        } else if (node.kind === K.PropertyDeclaration) {
          kind = ts.isClassLike(node.parent) && isFn(node.initializer) ? "method" : undefined;
        } else if (kind === "method" && !ts.isClassLike(node.parent)) {
          kind = undefined; // object-literal methods
        }
        if (node.kind === K.ModuleDeclaration && (node.flags & ts.NodeFlags.GlobalAugmentation)) kind = undefined;
        if (!kind) continue;
        const pos = node.name.getStart(sf);
        const key = file + ":" + pos;
        if (seen.has(key)) continue;
        seen.add(key);
        const l = loc(file, pos);
        defs.push({
          name: node.name.text,
          qualified_name: containers.concat([node.name.text]).join("."),
          kind,
          path: rel(file),
          line: l.line,
          column: l.column,
        });
      }
      const inGlobal = item.kind === "module" && item.text === "global";
      if (inGlobal) return;
      const next = containers.concat([item.text]);
      for (const c of item.childItems || []) visit(c, next);
    };
    const tree = ls.getNavigationTree(file);
    for (const c of tree.childItems || []) visit(c, []);
  }
  defs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.column - b.column));
  return defs;
}

function tokenCounts() {
  const counts = Object.create(null);
  for (const file of FILES) {
    const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, read(file));
    let t;
    while ((t = scanner.scan()) !== K.EndOfFileToken) {
      if (t === K.Identifier || (t >= K.FirstKeyword && t <= K.LastKeyword)) {
        const s = scanner.getTokenText();
        counts[s] = (counts[s] || 0) + 1;
      }
    }
  }
  return counts;
}

function imports() {
  const edges = new Set();
  const unresolved = [];
  const external = [];
  const cache = ts.createModuleResolutionCache(ROOT, (x) => x, OPTIONS);
  for (const file of FILES) {
    const info = ts.preProcessFile(read(file), true, true);
    for (const imp of info.importedFiles) {
      const r = ts.resolveModuleName(imp.fileName, file, OPTIONS, ts.sys, cache).resolvedModule;
      const line = program.getSourceFile(file).getLineAndCharacterOfPosition(imp.pos).line + 1;
      if (!r) {
        unresolved.push({ from: rel(file), spec: imp.fileName, line });
        continue;
      }
      const target = fs.realpathSync(r.resolvedFileName);
      if (!inRoot(target)) {
        external.push({ from: rel(file), spec: imp.fileName, line });
        continue;
      }
      if (target !== file) edges.add(rel(file) + "\0" + rel(target));
    }
  }
  return {
    edges: [...edges].sort().map((e) => ({ from: e.split("\0")[0], to: e.split("\0")[1] })),
    unresolved,
    external,
  };
}

// The identifier at an offset (the innermost node starting there that is an identifier).
function identAt(sf, pos) {
  let found;
  const visit = (n) => {
    if (n.getStart(sf) <= pos && pos < n.end) {
      if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n)) found = n;
      ts.forEachChild(n, visit);
    }
  };
  visit(sf);
  return found;
}

// The declarations a symbol stands for, aliases (import/export specifiers) followed.
function declsOf(checker, sym) {
  if (!sym) return [];
  if (sym.flags & ts.SymbolFlags.Alias) {
    try { sym = checker.getAliasedSymbol(sym); } catch (e) { return []; }
  }
  return sym.declarations || [];
}

function references(sample) {
  const checker = program.getTypeChecker();
  const out = [];
  for (const s of sample) {
    const file = path.join(ROOT, s.path);
    const sf = program.getSourceFile(file);
    const lineStart = sf.getPositionOfLineAndCharacter(s.line - 1, 0);
    const lineText = sf.text.slice(lineStart, sf.getLineEndOfPosition(lineStart));
    const pos = lineStart + Array.from(lineText).slice(0, s.column - 1).join("").length;
    const target = new Set(declsOf(checker, checker.getSymbolAtLocation(identAt(sf, pos))));
    const refs = new Map();
    const dropped = { other_symbol: 0, other_spelling: 0, outside: 0, in_comment: 0 };
    for (const group of ls.findReferences(file, pos) || []) {
      // Keep the group of the symbol itself and of aliases that resolve to it; drop the
      // groups findReferences adds for related symbols (base-class and interface members
      // the method overrides or implements, and their other implementations).
      const d = group.definition;
      const dsf = program.getSourceFile(d.fileName);
      const dsym = dsf && identAt(dsf, d.textSpan.start);
      const same = dsym && declsOf(checker, checker.getSymbolAtLocation(dsym)).some((x) => target.has(x));
      if (!same) {
        dropped.other_symbol += group.references.length;
        continue;
      }
      for (const r of group.references) {
        const f = fs.realpathSync(r.fileName);
        if (!inRoot(f)) {
          dropped.outside++;
          continue;
        }
        const rsf = program.getSourceFile(r.fileName);
        if (rsf.text.slice(r.textSpan.start, r.textSpan.start + r.textSpan.length) !== s.name) {
          dropped.other_spelling++; // `x as y`: the alias y and its uses
          continue;
        }
        if (ts.isInComment(rsf, r.textSpan.start)) {
          dropped.in_comment++; // JSDoc {@link X} and @see X
          continue;
        }
        const l = loc(f, r.textSpan.start);
        const p = rel(f);
        if (p === s.path && l.line === s.line && l.column === s.column) continue;
        refs.set(`${p}:${l.line}:${l.column}`, { path: p, line: l.line, column: l.column, is_definition: !!r.isDefinition });
      }
    }
    out.push({
      refs: [...refs.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.column - b.column)),
      dropped,
    });
  }
  return out;
}

if (cmd === "scan") {
  const diags = program.getSyntacticDiagnostics().length;
  process.stdout.write(JSON.stringify({
    typescript: ts.version,
    options: { target: "ES2022", module: "ESNext", moduleResolution: "Bundler", jsx: "Preserve", strict: true, types: [] },
    syntactic_errors: diags,
    files: FILES.map(rel),
    definitions: definitions(),
    counts: tokenCounts(),
    imports: imports(),
  }));
} else if (cmd === "refs") {
  const sample = JSON.parse(fs.readFileSync(0, "utf8"));
  process.stdout.write(JSON.stringify(references(sample)));
} else {
  console.error("usage: judge_typescript_ls.js scan|refs ROOT");
  process.exit(2);
}
