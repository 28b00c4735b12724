//! Scripts a JavaScript or TypeScript file runs in a child process: `spawn(process.execPath,
//! [path.join(__dirname, 'exit', 'ok.js')])`, `exec('node ' + path.join(__dirname,
//! '../bin/tape') + ' --strict')`. What the script runs is the spawning code's work (tape's
//! tests run their fixtures and the package's own command so, and V8's coverage follows the
//! child).

use tree_sitter::Node;

use super::Walker;
use crate::code::{ComputedLoad, Spawn};

/// `child_process`'s functions that run a file.
const SPAWNERS: &[&str] = &["spawn", "spawnSync", "fork", "execFile", "execFileSync", "exec", "execSync"];

/// Nodes looked at inside one call's arguments, at most.
const MAX_ARGUMENT_NODES: usize = 200;

/// Variables followed from a use to the path they hold, at most (`var bin = __dirname +
/// '/../bin/tape'`, then `spawn(node, [bin])`).
const MAX_VARIABLE_STEPS: usize = 3;

/// A script's path as the code writes it: from the file's own folder or from the working
/// directory, then the written parts.
struct ScriptPath {
    from_cwd: bool,
    parts: Vec<String>,
}

impl<'a> Walker<'a> {
    /// Notes a call of a `child_process` function given a script's path in its arguments:
    /// built from `__dirname` or `process.cwd()` by `path.join`/`path.resolve` or `+`, written
    /// there or in a variable, alone or inside a command line (`'node ' + bin + ' --strict'`).
    /// A path that is not a file of the repo (a `cwd` option's folder) is dropped when the
    /// graph is built.
    pub(super) fn note_spawn(&mut self, call: Node) {
        let Some(function) = call.child_by_field_name("function") else { return };
        let callee = match function.kind() {
            "identifier" => function,
            "member_expression" => match function.child_by_field_name("property") {
                Some(p) => p,
                None => return,
            },
            _ => return,
        };
        if !SPAWNERS.contains(&self.text(callee)) {
            return;
        }
        let Some(arguments) = call.child_by_field_name("arguments") else { return };
        let mut stack = vec![arguments];
        let mut seen = 0;
        while let Some(node) = stack.pop() {
            seen += 1;
            if seen > MAX_ARGUMENT_NODES {
                return;
            }
            if let Some(path) = self.script_path(node, 0) {
                self.out.spawned.push(Spawn {
                    parts: path.parts,
                    from_cwd: path.from_cwd,
                    line: call.start_position().row as u32 + 1,
                    callee: self.text(callee).to_string(),
                    enclosing: self.enclosing_symbol(),
                });
                continue;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// Notes a module loaded by a path the code computes: `import(resolve(testsDir, name))`,
    /// `require(file)`; not a path written as a string (an ordinary import).
    pub(super) fn note_computed_load(&mut self, call: Node) {
        let Some(function) = call.child_by_field_name("function") else { return };
        let loads =
            function.kind() == "import" || (function.kind() == "identifier" && self.text(function) == "require");
        if !loads {
            return;
        }
        let Some(arguments) = call.child_by_field_name("arguments") else { return };
        let mut cursor = arguments.walk();
        let Some(first) = arguments.named_children(&mut cursor).next() else { return };
        let written = first.kind() == "string"
            || (first.kind() == "template_string"
                && first.named_children(&mut first.walk()).all(|c| c.kind() == "string_fragment"));
        if written {
            return;
        }
        self.out
            .computed_loads
            .push(ComputedLoad { line: call.start_position().row as u32 + 1, enclosing: self.enclosing_symbol() });
    }

    /// The script path `node` holds: `path.join(__dirname, 'exit', 'ok.js')` (or `resolve`,
    /// or `process.cwd()` first), `__dirname + '/../bin/tape'`, a command line around one
    /// (`'node ' + …`, `… + ' --strict'`), or a variable set to one of these.
    fn script_path(&self, node: Node, steps: usize) -> Option<ScriptPath> {
        match node.kind() {
            "call_expression" => self.joined_path(node),
            "binary_expression" => {
                let (left, right) = (node.child_by_field_name("left")?, node.child_by_field_name("right")?);
                if node.child_by_field_name("operator").map(|o| self.text(o)) != Some("+") {
                    return None;
                }
                if let Some(from_cwd) = self.path_base(left) {
                    let part = self.plain_string(right)?;
                    // `__dirname + '/../bin/tape'`; `process.cwd() + ' --flag'` is no path.
                    return (!part.starts_with(' ')).then(|| ScriptPath { from_cwd, parts: vec![part] });
                }
                // A command line: the program before the path, the arguments after it.
                if self.plain_string(left).is_some_and(|s| s.ends_with(' ')) {
                    return self.script_path(right, steps);
                }
                if self.plain_string(right).is_some_and(|s| s.starts_with(' ')) {
                    return self.script_path(left, steps);
                }
                None
            }
            "identifier" if steps < MAX_VARIABLE_STEPS => {
                let value = self.variable_value(node)?;
                self.script_path(value, steps + 1)
            }
            _ => None,
        }
    }

    /// `path.join(BASE, 'a', 'b.js')` or `path.resolve(…)` with `__dirname` or
    /// `process.cwd()` as BASE and plain strings after it.
    fn joined_path(&self, call: Node) -> Option<ScriptPath> {
        let function = self.text(call.child_by_field_name("function")?);
        let name = function.rsplit('.').next().unwrap_or("");
        if !matches!(name, "join" | "resolve") {
            return None;
        }
        let arguments = call.child_by_field_name("arguments")?;
        let mut cursor = arguments.walk();
        let mut args = arguments.named_children(&mut cursor);
        let from_cwd = self.path_base(args.next()?)?;
        let parts: Option<Vec<String>> = args.map(|a| self.plain_string(a)).collect();
        parts.filter(|p| !p.is_empty()).map(|parts| ScriptPath { from_cwd, parts })
    }

    /// Whether `node` is `process.cwd()` (`Some(true)`) or `__dirname` (`Some(false)`).
    fn path_base(&self, node: Node) -> Option<bool> {
        match self.text(node) {
            "__dirname" => Some(false),
            "process.cwd()" => Some(true),
            _ => None,
        }
    }

    /// A string literal's text, without its quotes.
    fn plain_string(&self, node: Node) -> Option<String> {
        (node.kind() == "string").then(|| self.text(node).trim_matches(|c| c == '\'' || c == '"').to_string())
    }

    /// The value the nearest declaration of the variable `identifier` names gives it, in
    /// the blocks around the use (`var`, `let` or `const`; a later assignment is not seen).
    fn variable_value<'t>(&self, identifier: Node<'t>) -> Option<Node<'t>> {
        let name = self.text(identifier);
        let mut scope = identifier.parent();
        while let Some(block) = scope {
            let mut cursor = block.walk();
            for statement in block.named_children(&mut cursor) {
                if !matches!(statement.kind(), "variable_declaration" | "lexical_declaration") {
                    continue;
                }
                let mut inner = statement.walk();
                for declarator in statement.named_children(&mut inner) {
                    let named = declarator.child_by_field_name("name").is_some_and(|n| self.text(n) == name);
                    if named && declarator.kind() == "variable_declarator" {
                        return declarator.child_by_field_name("value");
                    }
                }
            }
            scope = block.parent();
        }
        None
    }
}
