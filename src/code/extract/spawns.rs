//! Scripts a JavaScript or TypeScript file runs in a child process: `spawn(process.execPath,
//! [path.join(__dirname, 'exit', 'ok.js')])`. What the script runs is the spawning code's work
//! (tape's tests run their fixtures so, and V8's coverage follows the child).

use tree_sitter::Node;

use super::Walker;
use crate::code::Spawn;

/// `child_process`'s functions that run a file.
const SPAWNERS: &[&str] = &["spawn", "spawnSync", "fork", "execFile", "execFileSync", "exec", "execSync"];

/// Nodes looked at inside one call's arguments, at most.
const MAX_ARGUMENT_NODES: usize = 200;

impl<'a> Walker<'a> {
    /// Notes a call of a `child_process` function given a script under the file's own folder
    /// (`path.join(__dirname, 'exit', 'ok.js')` or `path.resolve(…)`), in its arguments.
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
            if let Some(parts) = self.dirname_join(node) {
                self.out.spawned.push(Spawn {
                    parts,
                    line: call.start_position().row as u32 + 1,
                    callee: self.text(callee).to_string(),
                    enclosing: self.enclosing_symbol(),
                });
                return;
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }

    /// `path.join(__dirname, 'exit', 'ok.js')` (or `resolve`, `join` alone): the parts after
    /// `__dirname`, each a plain string.
    fn dirname_join(&self, node: Node) -> Option<Vec<String>> {
        if node.kind() != "call_expression" {
            return None;
        }
        let function = self.text(node.child_by_field_name("function")?);
        let name = function.rsplit('.').next().unwrap_or("");
        if !matches!(name, "join" | "resolve") {
            return None;
        }
        let arguments = node.child_by_field_name("arguments")?;
        let mut cursor = arguments.walk();
        let mut args = arguments.named_children(&mut cursor);
        if args.next().map(|a| self.text(a)) != Some("__dirname") {
            return None;
        }
        let parts: Option<Vec<String>> = args
            .map(|a| {
                let text = self.text(a);
                (a.kind() == "string").then(|| text.trim_matches(|c| c == '\'' || c == '"').to_string())
            })
            .collect();
        parts.filter(|p| !p.is_empty())
    }
}
