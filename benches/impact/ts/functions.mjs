// Lists the functions and statements of TypeScript source files with the TypeScript compiler's
// own parser, for ts/judge.py. Usage:
//   node benches/impact/ts/functions.mjs TOOLS_DIR PROJECT_DIR FILE... > out.json
//   node benches/impact/ts/functions.mjs --check-probes TOOLS_DIR PROJECT_DIR < probes.json
// TOOLS_DIR holds node_modules/typescript (fetch.sh installs the pinned version there); FILEs
// are relative to PROJECT_DIR. Prints {"<file>": {"functions": [...], "statements": [...]}}.
// Lines are 1-based, columns 0-based UTF-16 code units (the units of source maps and so of the
// istanbul locations @vitest/coverage-v8 writes).
//
// functions: every function with a body (function declaration, function expression, arrow,
//   method, constructor, getter/setter, in classes and object literals; overload signatures,
//   `declare`d and abstract members have no body and are not functions here), named or not, in
//   source order: {index, named, name, qualified_name, line, end_line, head, body, end, owner}.
//   The naming rules are those of benches/impact/js/functions.mjs; a function is NAMED when it
//   has a name of its own or is bound to one where it is written:
//     function f() {}                                   f
//     const/let/var f = function () {} / () => {}       f
//     f = ... ; a.b.f = ... ; X.prototype.f = ...       f (qualified: the assignment target)
//     { f: function () {} } / { f() {} } / { get f() {} }   f (qualified: the object's binding,
//                                                       e.g. objectTraps.get)
//     class C { constructor() {} ; f() {} ; static g() {} ; h = () => {} }
//                                                       C.constructor, C.f, C.g, C.h
//   TypeScript wrappers between a function (or object literal, class) and its binding are looked
//   through: `const f = (() => {}) as T`, `... satisfies T`, `x!`, `<T>x`, parentheses. A
//   private name `#f` is `f`. Computed keys ([Symbol.iterator]) and functions passed as
//   arguments, returned, or otherwise not bound to a name are not named: an anonymous function's
//   code belongs to the nearest named function around it (owner), or to no function at module
//   level. Qualified names join the enclosing named functions, classes and bound object literals
//   with '.'. head = [line, col] where the function's text starts (its modifiers, `get`/`set`,
//   `async`, the method key; for a function declaration `export`/`function`; decorators left
//   out), body = [line, col] of its body's start, end = [line, col] of its end; line/end_line are
//   head's and end's lines.
//
// statements: every statement (and every arrow function's expression body) whose code belongs
//   to a named function: {line, fn, owner, probe_ok}. fn = index of the innermost function (named
//   or not) containing it, owner = the named function it belongs to (named functions nested in
//   it are functions of their own; a class declared inside a function is not its code, its
//   methods are functions of their own). probe_ok: appending " // docdex-probe" to the
//   statement's first line is a comment-only edit of the owner: the line lies within the
//   owner's lines, every named function or class whose lines include it encloses the owner (so
//   not a nested one, nor another one written on the same line), and the line's end is not
//   inside a token or comment that spans lines (a template literal chunk, a string continued
//   with a backslash, a block or JSDoc comment, JSX text).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const checkProbes = args[0] === "--check-probes";
if (checkProbes) args.shift();
const [toolsDir, projectDir, ...files] = args;
if (!toolsDir || !projectDir) {
  console.error("usage: functions.mjs [--check-probes] TOOLS_DIR PROJECT_DIR FILE...");
  process.exit(2);
}
const ts = createRequire(path.join(path.resolve(toolsDir), "package.json"))("typescript");
const K = ts.SyntaxKind;

function scriptKind(rel) {
  if (rel.endsWith(".tsx")) return ts.ScriptKind.TSX;
  if (rel.endsWith(".jsx")) return ts.ScriptKind.JSX;
  if (/\.[mc]?js$/.test(rel)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function parse(rel, text) {
  return ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, scriptKind(rel));
}

function lc(sf, pos) {
  const { line, character } = sf.getLineAndCharacterOfPosition(pos);
  return [line + 1, character];
}

function isJSDocKind(node) {
  return node.kind >= K.FirstJSDocNode && node.kind <= K.LastJSDocNode;
}

// the leaf tokens of the parse (kind and text), JSDoc left out: what the file tokenises to
function leaves(sf) {
  const out = [];
  (function walk(node) {
    if (isJSDocKind(node)) return;
    const kids = node.getChildren(sf);
    if (kids.length === 0) {
      if (node.kind !== K.SyntaxList) out.push([node.kind, node.getText(sf), node.getStart(sf), node.end, node.pos]);
      return;
    }
    for (const k of kids) walk(k);
  })(sf);
  return out;
}

// every comment's [start, end] (the trivia before each token, the end-of-file token's too)
function commentRanges(sf, toks) {
  const text = sf.text;
  const seen = new Set();
  const out = [];
  for (const t of toks) {
    const rs = (ts.getTrailingCommentRanges(text, t[4]) || [])
      .concat(ts.getLeadingCommentRanges(text, t[4]) || []);
    for (const r of rs) {
      if (!seen.has(r.pos)) {
        seen.add(r.pos);
        out.push([r.pos, r.end, r.kind]);
      }
    }
  }
  return out;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) starts.push(i + 1);
    else if (c === 13) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    }
  }
  return starts;
}

function lineOf(starts, offset) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

// offset of the end of 1-based line n (its first line break character, or the text's end)
function lineEnd(text, starts, n) {
  let e = n < starts.length ? starts[n] : text.length;
  while (e > starts[n - 1] && (text[e - 1] === "\n" || text[e - 1] === "\r")) e--;
  return e;
}

// lines whose end lies inside a token or comment that spans lines
function badLines(sf) {
  const text = sf.text;
  const starts = lineStarts(text);
  const toks = leaves(sf);
  const multi = [];
  for (const [, , s, e] of toks) {
    if (lineOf(starts, s) !== lineOf(starts, e)) multi.push([s, e]);
  }
  for (const [s, e] of commentRanges(sf, toks)) {
    if (lineOf(starts, s) !== lineOf(starts, e)) multi.push([s, e]);
  }
  const bad = new Set();
  for (const [s, e] of multi) {
    const a = lineOf(starts, s);
    const b = lineOf(starts, e);
    for (let n = a; n <= b; n++) {
      const le = lineEnd(text, starts, n);
      if (s <= le && le < e) bad.add(n);
    }
  }
  return bad;
}

function keyName(name) {
  if (!name) return null;
  if (ts.isIdentifier(name)) return name.text;
  if (ts.isPrivateIdentifier(name)) return name.text.replace(/^#/, "");
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name) ||
      ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  return null; // computed
}

// dotted text of an assignment target: a.b.c, X.prototype.f, this.f; null when computed
function memberChain(node) {
  node = unwrapDown(node);
  if (ts.isIdentifier(node)) return node.text;
  if (node.kind === K.ThisKeyword) return "this";
  if (ts.isPropertyAccessExpression(node)) {
    const obj = memberChain(node.expression);
    const prop = keyName(node.name);
    return obj && prop ? obj + "." + prop : null;
  }
  if (ts.isElementAccessExpression(node)) {
    const arg = node.argumentExpression;
    const obj = memberChain(node.expression);
    if (obj && arg && (ts.isStringLiteral(arg) || ts.isNumericLiteral(arg))) {
      return obj + "." + arg.text;
    }
  }
  return null;
}

const WRAPPERS = new Set([K.ParenthesizedExpression, K.AsExpression, K.SatisfiesExpression,
  K.NonNullExpression, K.TypeAssertionExpression]);

function unwrapDown(node) {
  while (WRAPPERS.has(node.kind)) node = node.expression;
  return node;
}

// the binding's [name, qualified suffix] of an expression (function, class or object literal)
// where it is written, or null
function bindingOf(node) {
  let child = node;
  let parent = node.parent;
  while (parent && WRAPPERS.has(parent.kind)) {
    child = parent;
    parent = parent.parent;
  }
  if (!parent) return null;
  if (ts.isVariableDeclaration(parent) && parent.initializer === child &&
      ts.isIdentifier(parent.name)) {
    return [parent.name.text, parent.name.text];
  }
  if (ts.isBinaryExpression(parent) && parent.right === child &&
      parent.operatorToken.kind === K.EqualsToken) {
    const chain = memberChain(parent.left);
    if (!chain) return null;
    return [chain.split(".").pop(), chain];
  }
  if ((ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) &&
      parent.initializer === child) {
    const k = keyName(parent.name);
    return k === null ? null : [k, k];
  }
  return null;
}

const FUNCTION_KINDS = new Set([K.FunctionDeclaration, K.FunctionExpression, K.ArrowFunction,
  K.MethodDeclaration, K.Constructor, K.GetAccessor, K.SetAccessor]);
const CLASS_KINDS = new Set([K.ClassDeclaration, K.ClassExpression]);

function isStatement(node) {
  if (node.kind === K.Block) return true;
  const n = K[node.kind];
  return typeof n === "string" && /Statement$/.test(n);
}

// where a node's own text starts: modifiers included, decorators left out
function headStart(sf, node) {
  const mods = node.modifiers ? node.modifiers.filter((m) => m.kind !== K.Decorator) : [];
  if (mods.length) return mods[0].getStart(sf);
  if (node.modifiers && node.modifiers.length) {
    // only decorators: the first token after them
    const last = node.modifiers[node.modifiers.length - 1];
    return ts.skipTrivia(sf.text, last.end);
  }
  return node.getStart(sf);
}

function analyse(rel, text) {
  const sf = parse(rel, text);
  const bad = badLines(sf);
  const functions = [];
  const statements = [];
  const spans = []; // [line, end_line, start, end] of named functions and classes

  function visit(node, ctx) {
    if (FUNCTION_KINDS.has(node.kind)) {
      if (!node.body) return; // a signature: overload, declare, abstract
      const isMember = ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) ||
        ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node);
      let name = null;
      let qual = null;
      if (isMember) {
        const k = ts.isConstructorDeclaration(node) ? "constructor" : keyName(node.name);
        if (k !== null) {
          name = k;
          qual = ctx.prefix + k;
        }
      } else {
        const own = node.name && ts.isIdentifier(node.name) ? node.name.text : null;
        const bound = bindingOf(node);
        if (own) {
          name = own;
          qual = ctx.prefix + (bound ? bound[1] : own);
        } else if (bound) {
          name = bound[0];
          qual = ctx.prefix + bound[1];
        }
      }
      let hs = headStart(sf, node);
      // a class field's arrow: its head is the field's
      const up = node.parent && ts.isPropertyDeclaration(node.parent) &&
        unwrapDown(node.parent.initializer || node) === node ? node.parent : null;
      if (up) hs = headStart(sf, up);
      const index = functions.length;
      const named = name !== null;
      const rec = {
        index, named, name, qualified_name: qual,
        line: lc(sf, hs)[0], end_line: lc(sf, node.end)[0],
        head: lc(sf, hs), body: lc(sf, node.body.getStart(sf)), end: lc(sf, node.end),
        start_offset: hs, end_offset: node.end,
        owner: named ? index : ctx.owner,
      };
      functions.push(rec);
      if (named) spans.push([rec.line, rec.end_line, hs, node.end]);
      const inner = { prefix: named ? qual + "." : ctx.prefix, fn: index, owner: rec.owner };
      for (const p of node.parameters) visit(p, inner);
      if (ts.isBlock(node.body)) {
        for (const st of node.body.statements) visit(st, inner);
      } else {
        if (inner.owner >= 0) addStatement(node.body, inner);
        visit(node.body, inner);
      }
      return;
    }
    if (CLASS_KINDS.has(node.kind)) {
      const own = node.name ? node.name.text : null;
      const bound = bindingOf(node);
      const cname = own || (bound && bound[1]);
      const hs = headStart(sf, node);
      spans.push([lc(sf, hs)[0], lc(sf, node.end)[0], hs, node.end]);
      const inner = { ...ctx, prefix: cname ? ctx.prefix + cname + "." : ctx.prefix };
      for (const h of node.heritageClauses || []) visit(h, ctx);
      for (const el of node.members) {
        if (ts.isClassStaticBlockDeclaration(el)) continue; // class-level code, not a function's
        if (el.name && ts.isComputedPropertyName(el.name)) visit(el.name, ctx);
        if (FUNCTION_KINDS.has(el.kind)) visit(el, inner);
        else if (ts.isPropertyDeclaration(el) && el.initializer) {
          visit(el.initializer, { ...inner, fn: -1, owner: -1 });
        }
      }
      return;
    }
    if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) ||
        ts.isModuleDeclaration(node) && (node.flags & ts.NodeFlags.Ambient)) return;
    let childCtx = ctx;
    if (ts.isObjectLiteralExpression(node)) {
      const bound = bindingOf(node);
      if (bound) childCtx = { ...ctx, prefix: ctx.prefix + bound[1] + "." };
      for (const p of node.properties) {
        if (p.name && ts.isComputedPropertyName(p.name)) visit(p.name, ctx);
        if (FUNCTION_KINDS.has(p.kind)) {
          // a method's name is its key, qualified with the object's binding
          visit(p, childCtx);
        } else {
          ts.forEachChild(p, (c) => {
            if (c !== p.name) visit(c, childCtx);
          });
        }
      }
      return;
    }
    if (isStatement(node) && ctx.owner >= 0) addStatement(node, ctx);
    ts.forEachChild(node, (c) => visit(c, childCtx));
  }

  function addStatement(node, ctx) {
    statements.push({ line: lc(sf, node.getStart(sf))[0], fn: ctx.fn, owner: ctx.owner });
  }

  ts.forEachChild(sf, (c) => visit(c, { prefix: "", fn: -1, owner: -1 }));

  for (const s of statements) {
    const owner = functions[s.owner];
    const shared = spans.some(([a, b, st, en]) => a <= s.line && s.line <= b &&
      !(st <= owner.start_offset && owner.end_offset <= en));
    s.probe_ok = s.line >= owner.line && s.line <= owner.end_line && !shared && !bad.has(s.line);
  }
  return { functions, statements };
}

// --check-probes: reads [{path, line}, ...] (JSON) from stdin and prints the ones for which
// appending " // docdex-probe" to the line is not a comment-only edit: the edited file must parse
// without new syntax errors to the same tokens (kind and text, comments aside), and the line's
// end must not lie inside a comment that spans lines.
if (checkProbes) {
  const probes = JSON.parse(readFileSync(0, "utf8"));
  const bad = [];
  for (const { path: rel, line } of probes) {
    const text = readFileSync(path.join(projectDir, rel), "utf8");
    const lines = text.split(/(?<=\n)/);
    const cur = lines[line - 1];
    const body = cur.replace(/\r?\n$/, "");
    lines[line - 1] = body + " // docdex-probe" + cur.slice(body.length);
    const edited = lines.join("");
    const a = parse(rel, text);
    const b = parse(rel, edited);
    const ta = leaves(a).map((t) => t[0] + "\u0000" + t[1]);
    const tb = leaves(b).map((t) => t[0] + "\u0000" + t[1]);
    let same = ta.length === tb.length && ta.every((t, i) => t === tb[i]) &&
      a.parseDiagnostics.length === b.parseDiagnostics.length;
    if (same && badLines(a).has(line)) same = false;
    // the probe comment itself must be a comment of the edited file
    if (same) {
      const pos = text.split(/(?<=\n)/).slice(0, line - 1).join("").length + body.length + 1;
      const cs = commentRanges(b, leaves(b));
      if (!cs.some(([s, e]) => s <= pos && pos < e)) same = false;
    }
    if (!same) bad.push({ path: rel, line });
  }
  process.stdout.write(JSON.stringify(bad));
  process.exit(0);
}

const out = {};
for (const rel of files) {
  const text = readFileSync(path.join(projectDir, rel), "utf8");
  out[rel] = analyse(rel, text);
}
process.stdout.write(JSON.stringify(out));
