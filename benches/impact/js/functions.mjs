// Lists the functions and statements of JavaScript source files with acorn (a real parser), for
// judge.py. Usage:
//   node benches/impact/js/functions.mjs TOOLS_DIR PROJECT_DIR FILE... > out.json
//   node benches/impact/js/functions.mjs --check-probes TOOLS_DIR PROJECT_DIR < probes.json
// TOOLS_DIR holds node_modules/acorn (fetch.sh installs the pinned version there); FILEs are
// relative to PROJECT_DIR. Prints {"<file>": {"source_type": "script"|"module",
// "functions": [...], "statements": [...]}} (source_type from the extension, .mjs or .cjs, else
// the nearest package.json's "type"):
//
// functions: every function node (declaration, expression, arrow, method, getter/setter), named
//   or not, in source order: {index, named, name, qualified_name, line, end_line, head_start,
//   start, end, body_start, owner}. Offsets are UTF-16 code unit offsets into the file text,
//   the unit V8's coverage ranges use. A function is NAMED when it has a name of its own or is
//   bound to one where it is written:
//     function f() {}                         f
//     var/let/const f = function () {} / () => {}   f
//     f = ... ; a.b.f = ... ; X.prototype.f = ...    f (qualified: the assignment target,
//                                                     e.g. X.prototype.f, module.exports)
//     { f: function () {} } / { f() {} } / { get f() {} }   f (qualified: the object's binding,
//                                                     e.g. utils.f, module.exports.f)
//     class C { f() {} ; static g() {} ; h = () => {} }     C.f, C.g, C.h
//   A function expression's own name wins over the binding for the name, not for the qualified
//   name: `X.prototype.deepEqual = function tapeDeepEqual () {}` is tapeDeepEqual, qualified
//   X.prototype.deepEqual. Qualified names join the enclosing named functions, classes and bound
//   object literals with '.' (e.g. X.prototype._end.completeEnd). Computed keys
//   ([Symbol.iterator]) and functions passed as arguments, returned, or otherwise not bound to
//   a name are not named: an anonymous function's code belongs to the nearest named function
//   around it (owner), or to no function when it runs at module level. owner = index of the
//   named function that owns this one's code (itself when named, -1 when none).
//   head_start: where V8's function range may start at the earliest (the method/property/
//   `static`/`get` keyword for a method, else the function node itself); V8 starts a method's
//   range at its key and a function's at `function`/`async`/the first parameter.
//   line/end_line: 1-based lines of head_start and of the function's end.
//
// statements: every statement (and every arrow function's expression body) whose code belongs
//   to a named function: {offset, line, fn, owner, probe_ok}. fn = index of the innermost
//   function node (named or not) containing it, whose V8 ranges give its execution count;
//   owner = the named function it belongs to. Class declarations inside a function are not its
//   statements (their methods are functions of their own). probe_ok: appending
//   " // docdex-probe" to the statement's first line is a comment-only edit of the owner:
//   the line lies within the owner's lines, every named function or class whose lines include
//   it encloses the owner (so not a nested one, nor another one written on the same line), and
//   the line's end is not inside a token or comment that spans lines (a template literal
//   chunk, a string continued with a backslash, a block comment).
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
const acorn = createRequire(path.join(path.resolve(toolsDir), "package.json"))("acorn");

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

function keyName(key, computed) {
  if (computed) return null;
  if (key.type === "Identifier" || key.type === "PrivateIdentifier") return key.name;
  if (key.type === "Literal" && (typeof key.value === "string" || typeof key.value === "number")) {
    return String(key.value);
  }
  return null;
}

// dotted text of an assignment target: a.b.c, X.prototype.f, this.f; null when computed
function memberChain(node) {
  if (node.type === "Identifier") return node.name;
  if (node.type === "ThisExpression") return "this";
  if (node.type === "MemberExpression") {
    const obj = memberChain(node.object);
    const prop = keyName(node.property, node.computed);
    return obj && prop ? obj + "." + prop : null;
  }
  return null;
}

// the name an expression (function, class or object literal) is bound to where it is written:
// [name, qualified suffix] or null
function bindingOf(node, parent) {
  if (!parent) return null;
  if (parent.type === "VariableDeclarator" && parent.init === node &&
      parent.id.type === "Identifier") {
    return [parent.id.name, parent.id.name];
  }
  if (parent.type === "AssignmentExpression" && parent.right === node) {
    const chain = memberChain(parent.left);
    if (!chain) return null;
    return [chain.split(".").pop(), chain];
  }
  if ((parent.type === "Property" || parent.type === "PropertyDefinition") &&
      parent.value === node) {
    const k = keyName(parent.key, parent.computed);
    return k === null ? null : [k, k];
  }
  if (parent.type === "MethodDefinition" && parent.value === node) {
    const k = keyName(parent.key, parent.computed);
    return k === null ? null : [k, k];
  }
  return null;
}

const FUNCTION_TYPES = new Set([
  "FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression",
]);
const CLASS_TYPES = new Set(["ClassDeclaration", "ClassExpression"]);

function isStatement(node) {
  return /Statement$/.test(node.type) || node.type === "VariableDeclaration";
}

function analyse(text, sourceType) {
  const tokens = [];
  const comments = [];
  const ast = acorn.parse(text, {
    ecmaVersion: "latest",
    sourceType,
    allowHashBang: true,
    allowReturnOutsideFunction: sourceType === "script",
    onToken: tokens,
    onComment: comments,
  });
  const starts = lineStarts(text);
  // spans (start, end) of tokens and comments that contain a line break
  const multi = [];
  for (const t of tokens) {
    const label = t.type.label;
    if ((label === "template" || label === "invalidTemplate" || label === "string") &&
        lineOf(starts, t.start) !== lineOf(starts, t.end)) multi.push([t.start, t.end]);
  }
  for (const c of comments) {
    if (c.type === "Block" && lineOf(starts, c.start) !== lineOf(starts, c.end)) {
      multi.push([c.start, c.end]);
    }
  }
  const badLine = new Set();
  for (const [s, e] of multi) {
    const a = lineOf(starts, s);
    const b = lineOf(starts, e);
    for (let n = a; n <= b; n++) {
      const le = lineEnd(text, starts, n);
      if (s <= le && le < e) badLine.add(n);
    }
  }

  const functions = [];
  const statements = [];
  // line spans of named functions and classes: a probe line may lie only in its owner and in
  // what encloses the owner
  const spans = []; // [line, end_line, start, end]

  // ctx: {prefix: string, fn: innermost function index or -1, owner: named owner index or -1}
  function visit(node, parent, ctx) {
    if (!node || typeof node.type !== "string") return;
    if (FUNCTION_TYPES.has(node.type)) {
      const own = node.id && node.id.name;
      const bound = bindingOf(node, parent);
      let name = null;
      let qual = null;
      if (own) {
        name = own;
        qual = ctx.prefix + (bound ? bound[1] : own);
      } else if (bound) {
        name = bound[0];
        qual = ctx.prefix + bound[1];
      }
      const isMethod = parent && parent.value === node && (parent.type === "MethodDefinition" ||
        parent.type === "PropertyDefinition" ||
        (parent.type === "Property" && (parent.method || parent.kind === "get" || parent.kind === "set")));
      const headStart = isMethod ? parent.start : node.start;
      const index = functions.length;
      const named = name !== null;
      const rec = {
        index, named, name, qualified_name: qual,
        line: lineOf(starts, headStart), end_line: lineOf(starts, node.end),
        head_start: headStart, start: node.start, end: node.end, body_start: node.body.start,
        owner: named ? index : ctx.owner,
      };
      functions.push(rec);
      if (named) spans.push([rec.line, rec.end_line, headStart, node.end]);
      const inner = {
        prefix: named ? qual + "." : ctx.prefix,
        fn: index,
        owner: rec.owner,
      };
      for (const p of node.params) visit(p, node, inner);
      if (node.body.type === "BlockStatement") {
        for (const st of node.body.body) visit(st, node.body, inner);
      } else {
        // an arrow's expression body counts as one statement
        if (inner.owner >= 0) addStatement(node.body, inner);
        visit(node.body, node, inner);
      }
      return;
    }
    if (CLASS_TYPES.has(node.type)) {
      const own = node.id && node.id.name;
      const bound = bindingOf(node, parent);
      const cname = own || (bound && bound[1]);
      const line = lineOf(starts, node.start);
      const endLine = lineOf(starts, node.end);
      spans.push([line, endLine, node.start, node.end]);
      const inner = { ...ctx, prefix: cname ? ctx.prefix + cname + "." : ctx.prefix };
      if (node.superClass) visit(node.superClass, node, ctx);
      for (const el of node.body.body) {
        if (el.type === "StaticBlock") continue; // class-level code, not a function's
        if (el.computed) visit(el.key, el, ctx);
        if (el.value) visit(el.value, el, { ...inner, fn: -1, owner: -1 });
      }
      return;
    }
    let childCtx = ctx;
    if (node.type === "ObjectExpression") {
      const bound = bindingOf(node, parent);
      if (bound) childCtx = { ...ctx, prefix: ctx.prefix + bound[1] + "." };
    }
    if (isStatement(node) && ctx.owner >= 0) addStatement(node, ctx);
    for (const key of Object.keys(node)) {
      if (key === "type" || key === "start" || key === "end") continue;
      const v = node[key];
      if (Array.isArray(v)) {
        for (const c of v) if (c && typeof c.type === "string") visit(c, node, childCtx);
      } else if (v && typeof v.type === "string") {
        visit(v, node, childCtx);
      }
    }
  }

  function addStatement(node, ctx) {
    statements.push({
      offset: node.start, line: lineOf(starts, node.start), fn: ctx.fn, owner: ctx.owner,
    });
  }

  for (const st of ast.body) visit(st, ast, { prefix: "", fn: -1, owner: -1 });

  for (const s of statements) {
    const owner = functions[s.owner];
    // every named function or class whose lines include this line must enclose the owner
    const shared = spans.some(([a, b, st, en]) => a <= s.line && s.line <= b &&
      !(st <= owner.head_start && owner.end <= en));
    s.probe_ok = s.line >= owner.line && s.line <= owner.end_line && !shared &&
      !badLine.has(s.line);
  }
  return { functions, statements };
}

function sourceTypeOf(projectDir, rel) {
  if (rel.endsWith(".mjs")) return "module";
  if (rel.endsWith(".cjs")) return "script";
  // nearest package.json's "type"
  let dir = path.dirname(path.join(projectDir, rel));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
      return pkg.type === "module" ? "module" : "script";
    } catch {
      const up = path.dirname(dir);
      if (up === dir) return "script";
      dir = up;
    }
  }
}

// --check-probes: reads [{path, line}, ...] (JSON) from stdin and prints the ones for which
// appending " // docdex-probe" to the line is not a comment-only edit: the edited file must parse
// to the same tokens (type and value, comments aside) as the original.
function tokensOf(text, sourceType) {
  const toks = [];
  acorn.parse(text, {
    ecmaVersion: "latest", sourceType, allowHashBang: true,
    allowReturnOutsideFunction: sourceType === "script", onToken: toks,
  });
  return toks.map((t) => t.type.label + "\u0000" + String(t.value));
}

if (checkProbes) {
  const probes = JSON.parse(readFileSync(0, "utf8"));
  const bad = [];
  for (const { path: rel, line } of probes) {
    const text = readFileSync(path.join(projectDir, rel), "utf8");
    const sourceType = sourceTypeOf(projectDir, rel);
    const lines = text.split(/(?<=\n)/);
    const cur = lines[line - 1];
    const body = cur.replace(/\r?\n$/, "");
    lines[line - 1] = body + " // docdex-probe" + cur.slice(body.length);
    let same = false;
    try {
      const a = tokensOf(text, sourceType);
      const b = tokensOf(lines.join(""), sourceType);
      same = a.length === b.length && a.every((t, i) => t === b[i]);
    } catch (e) {
      same = false;
    }
    if (!same) bad.push({ path: rel, line });
  }
  process.stdout.write(JSON.stringify(bad));
  process.exit(0);
}

const out = {};
for (const rel of files) {
  let text = readFileSync(path.join(projectDir, rel), "utf8");
  if (text.charCodeAt(0) === 0xfeff) {
    console.error(rel + ": starts with a byte order mark (V8 offsets would be shifted by one)");
    process.exit(1);
  }
  const sourceType = sourceTypeOf(projectDir, rel);
  out[rel] = { source_type: sourceType, ...analyse(text, sourceType) };
}
process.stdout.write(JSON.stringify(out));
