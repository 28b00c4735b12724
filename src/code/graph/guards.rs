//! Code that runs only once something turned it on (`FileCode::guarded`): under a Python
//! attribute the repo leaves off, a parameter only a test passes, a Rust field a literal
//! leaves `None` or `false`, a comparison with a constant. Whether a guard is off, and what
//! turns it on.

use std::collections::{HashMap, HashSet};

use super::{CodeGraph, SymbolRef};
use crate::code::{GuardTest, SymbolKind, UseKind, TOP_LEVEL};

impl CodeGraph {
    /// Whether `attribute` is one the repo's Python classes leave off until something sets it:
    /// a class body (or a method, on `self`) outside the tests assigns it `None` or `False`
    /// (wtforms' `csrf = False`, `self.strict = strict` of `strict=False`), and none assigns it
    /// anything else (a cache filled on first use is on). Code under `if meta.csrf:` runs in
    /// the tests that set it, and they name it (`FileCode::guarded`). A name `hasattr` asks
    /// for (`GuardTest::Asked`) is off when no Python definition outside the tests has it:
    /// only a test's own object (or a library's) can. A parameter's guard
    /// (`GuardTest::Parameter`) is off here; whether a call outside the tests passes it is
    /// `guard_off`'s question.
    pub fn off_by_default(&self, attribute: &str, test: GuardTest) -> bool {
        if matches!(test, GuardTest::Parameter(_)) {
            return true;
        }
        if test == GuardTest::Asked {
            let defined = self.defs_by_name.get(attribute).is_some_and(|defs| {
                defs.iter().any(|&(f, _)| self.codes[f as usize].language == "python" && !self.is_test_file(f))
            });
            return !defined;
        }
        self.off_attributes
            .get_or_init(|| {
                let mut off = HashSet::new();
                let mut on = HashSet::new();
                for (f, code) in self.codes.iter().enumerate().filter(|(_, c)| c.language == "python") {
                    if self.is_test_file(f as u32) {
                        continue;
                    }
                    for (name, unset) in &code.class_defaults {
                        if *unset { &mut off } else { &mut on }.insert(name.as_str());
                    }
                }
                off.difference(&on).map(|s| s.to_string()).collect()
            })
            .contains(attribute)
    }

    /// Whether the code of `file` under a guard (`FileCode::guards_of`) runs only where a test
    /// names the guard's word: its attribute is off (`off_by_default`), or its parameter is
    /// one no call outside the tests passes to the function (by its name; a class's for
    /// `__init__`), by keyword or by place. A Rust guard's code runs only where what turns it
    /// on ran (`guard_enablers`).
    pub fn guard_off(&self, file: u32, (word, test, span): (&str, GuardTest, [u32; 4])) -> bool {
        if matches!(test, GuardTest::Field | GuardTest::Constant) {
            return self.guard_enablers(word, test).is_some();
        }
        if !self.off_by_default(word, test) {
            return false;
        }
        let GuardTest::Parameter(place) = test else { return true };
        let code = &self.codes[file as usize];
        let function = code
            .symbols
            .iter()
            .filter(|s| s.kind.is_callable() && s.line <= span[0] && span[0] <= s.end_line)
            .max_by_key(|s| s.line);
        let Some(function) = function else { return false };
        let callee = match function.name.as_str() {
            "__init__" | "__new__" => function.container.rsplit('.').next().unwrap_or(""),
            name => name,
        };
        let (by_keyword, by_place) = self.passed_outside_tests.get_or_init(|| {
            let python =
                self.codes.iter().enumerate().filter(|(f, c)| c.language == "python" && !self.is_test_file(*f as u32));
            let mut by_keyword = HashSet::new();
            let mut by_place: HashMap<String, u32> = HashMap::new();
            for (_, code) in python {
                by_keyword.extend(code.passed.iter().cloned());
                for (callee, count) in &code.passed_by_place {
                    let most = by_place.entry(callee.clone()).or_default();
                    *most = (*most).max(*count);
                }
            }
            (by_keyword, by_place)
        });
        let passed = |name: &str| {
            by_keyword.contains(&(name.to_string(), word.to_string()))
                || by_place.get(name).is_some_and(|&count| count > place)
        };
        !passed(callee) && !passed(&function.name)
    }

    /// The definitions that turn a Rust guard on, when there are any and the guard is off
    /// without them: for `GuardTest::Field`, those that give the field another value than
    /// the `None` or `false` some literal gives it (`Compound::new_range`'s `range:
    /// Some(…)`, `set_dev_mode`'s `self.dev_mode = enable`); for `GuardTest::Constant`, those
    /// that use the constant otherwise than in a comparison (`RawValue::serialize`'s
    /// `serialize_newtype_struct(RAW_VALUE_TOKEN, …)`). Fields are told apart by name only:
    /// another type's field of the same name adds its setters, so the answer can only grow.
    /// `None` when code outside any definition gives the value (a `static`'s initializer
    /// runs where it is read).
    pub fn guard_enablers(&self, word: &str, test: GuardTest) -> Option<&[SymbolRef]> {
        let table = match test {
            GuardTest::Field => self.rust_fields.get_or_init(|| self.field_enablers()),
            GuardTest::Constant => self.rust_constants.get_or_init(|| self.constant_enablers()),
            _ => return None,
        };
        table.get(word).filter(|e| e.off && !e.at_top_level && !e.on.is_empty()).map(|e| e.on.as_slice())
    }

    fn field_enablers(&self) -> HashMap<String, Enablers> {
        let mut fields: HashMap<String, Enablers> = HashMap::new();
        for (f, code) in self.codes.iter().enumerate().filter(|(_, c)| c.language == "rust") {
            for (name, off, enclosing) in &code.field_values {
                let entry = fields.entry(name.clone()).or_default();
                if *off {
                    entry.off = true;
                } else if *enclosing == TOP_LEVEL {
                    entry.at_top_level = true;
                } else if !entry.on.contains(&(f as u32, *enclosing)) {
                    entry.on.push((f as u32, *enclosing));
                }
            }
        }
        fields
    }

    fn constant_enablers(&self) -> HashMap<String, Enablers> {
        let compared: HashSet<&str> = self
            .codes
            .iter()
            .flat_map(|c| c.guarded.iter())
            .filter(|(.., test)| *test == GuardTest::Constant)
            .map(|(_, word, _)| word.as_str())
            .collect();
        let mut constants: HashMap<String, Enablers> = HashMap::new();
        for (f, code) in self.codes.iter().enumerate().filter(|(_, c)| c.language == "rust") {
            for o in &code.occurrences {
                let name = code.strings[o.name as usize].as_str();
                if !compared.contains(name) || o.kind == UseKind::Import {
                    continue;
                }
                if code.compared.binary_search(&(o.line, o.column)).is_ok() {
                    continue;
                }
                // A constant of the repo's: asked once per name.
                let entry = constants.entry(name.to_string()).or_insert_with(|| Enablers {
                    off: self.defs_by_name.get(name).is_some_and(|defs| {
                        defs.iter().any(|&r| {
                            self.codes[r.0 as usize].language == "rust" && self.symbol(r).kind == SymbolKind::Constant
                        })
                    }),
                    ..Enablers::default()
                });
                match o.enclosing {
                    None => entry.at_top_level = true,
                    Some(e) if !entry.on.contains(&(f as u32, e)) => entry.on.push((f as u32, e)),
                    Some(_) => {}
                }
            }
        }
        constants
    }
}

/// What turns a Rust guard's word on (`CodeGraph::guard_enablers`).
#[derive(Debug, Default)]
pub(super) struct Enablers {
    /// Some code leaves it off: a literal gives the field `None` or `false`; the constant is
    /// the repo's.
    off: bool,
    /// Code outside any definition turns it on.
    at_top_level: bool,
    on: Vec<SymbolRef>,
}
