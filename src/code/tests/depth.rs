//! How far from a change tests are looked for: a private method's calls by its type's other
//! private methods are steps inside one object's work, not hops.

use super::import_time::tests_of;
use super::resolution::python_graph;

/// A recursive-descent parser's rules are private methods calling each other, many calls
/// below the one a test makes (pycparser's `_parse_array_decl` is eight below
/// `CParser.parse`): a step from one private method to another of its class is free, so
/// the deepest rule still reaches the test. A chain of public functions as long is not
/// followed to its end, nor a weak use past the bound.
#[test]
fn private_steps_inside_a_type_do_not_count_toward_the_tests_bound() {
    let mut parser = String::from("class Parser:\n    def parse(self, text):\n        return self._rule0(text)\n\n");
    let mut chain = String::new();
    for i in 0..12 {
        parser.push_str(&format!("    def _rule{i}(self, text):\n        return self._rule{}(text)\n\n", i + 1));
        chain.push_str(&format!("def step{i}(text):\n    return step{}(text)\n\n", i + 1));
    }
    parser.push_str("    def _rule12(self, text):\n        return text\n");
    chain.push_str("def step12(text):\n    return text\n");
    let graph = python_graph(&[
        ("pkg/parser.py", &parser),
        ("pkg/chain.py", &chain),
        (
            "tests/test_parser.py",
            "from pkg.parser import Parser\n\ndef test_parse():\n    assert Parser().parse('x')\n",
        ),
        ("tests/test_chain.py", "from pkg.chain import step0\n\ndef test_steps():\n    assert step0('x')\n"),
        // A parser of no known type: a weak use, followed within the bound only.
        ("tests/test_loose.py", "def test_loose(parser):\n    assert parser.parse('x')\n"),
    ]);
    assert_eq!(tests_of(&graph, "pkg/parser.py", "Parser._rule2"), vec!["tests/test_loose.py", "tests/test_parser.py"]);
    assert_eq!(tests_of(&graph, "pkg/parser.py", "Parser._rule12"), vec!["tests/test_parser.py"]);
    assert_eq!(tests_of(&graph, "pkg/chain.py", "step1"), vec!["tests/test_chain.py"]);
    assert!(tests_of(&graph, "pkg/chain.py", "step12").is_empty());
}
