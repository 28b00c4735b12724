//! Methods of a language's built-in types (Python's `dict`, `list`, `set`, `str`, `bytes`,
//! numbers and file objects). A call `x.update(…)` on a value of unknown type is far more often
//! the built-in's (`env.update(…)` on a dict) than the one class in the repo that defines
//! `update`: such a call is not matched by name alone, and change impact does not guess it.
//! The list is the language's, not any repo's: Python's is `dir()` of those types (public names),
//! as Python 3.11 gives them.

/// Python's built-in types' public methods and attributes, sorted.
const PYTHON: &[&str] = &[
    "add",
    "append",
    "as_integer_ratio",
    "bit_count",
    "bit_length",
    "buffer",
    "capitalize",
    "casefold",
    "center",
    "clear",
    "close",
    "closed",
    "conjugate",
    "copy",
    "count",
    "decode",
    "denominator",
    "detach",
    "difference",
    "difference_update",
    "discard",
    "encode",
    "encoding",
    "endswith",
    "errors",
    "expandtabs",
    "extend",
    "fileno",
    "find",
    "flush",
    "format",
    "format_map",
    "from_bytes",
    "fromhex",
    "fromkeys",
    "get",
    "getbuffer",
    "getvalue",
    "hex",
    "imag",
    "index",
    "insert",
    "intersection",
    "intersection_update",
    "is_integer",
    "isalnum",
    "isalpha",
    "isascii",
    "isatty",
    "isdecimal",
    "isdigit",
    "isdisjoint",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "issubset",
    "issuperset",
    "istitle",
    "isupper",
    "items",
    "join",
    "keys",
    "line_buffering",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "name",
    "newlines",
    "numerator",
    "partition",
    "pop",
    "popitem",
    "read",
    "read1",
    "readable",
    "readinto",
    "readinto1",
    "readline",
    "readlines",
    "real",
    "reconfigure",
    "remove",
    "removeprefix",
    "removesuffix",
    "replace",
    "reverse",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "seek",
    "seekable",
    "setdefault",
    "sort",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "symmetric_difference",
    "symmetric_difference_update",
    "tell",
    "title",
    "to_bytes",
    "translate",
    "truncate",
    "union",
    "update",
    "upper",
    "values",
    "writable",
    "write",
    "write_through",
    "writelines",
    "zfill",
];

/// Python's built-in and standard-library types a class derives from to be one of them (a
/// mapping, a sequence, a set, a file): its members are the built-ins' own names, and a call
/// on a value of unknown type may well be its. Sorted.
const PYTHON_BASES: &[&str] = &[
    "BufferedIOBase",
    "BufferedReader",
    "BufferedWriter",
    "BytesIO",
    "ChainMap",
    "Counter",
    "Dict",
    "FileIO",
    "FrozenSet",
    "IOBase",
    "ItemsView",
    "KeysView",
    "List",
    "Mapping",
    "MappingView",
    "MutableMapping",
    "MutableSequence",
    "MutableSet",
    "OrderedDict",
    "RawIOBase",
    "Sequence",
    "Set",
    "StringIO",
    "TextIOBase",
    "TextIOWrapper",
    "Tuple",
    "UserDict",
    "UserList",
    "UserString",
    "ValuesView",
    "bytearray",
    "bytes",
    "defaultdict",
    "deque",
    "dict",
    "frozenset",
    "list",
    "set",
    "str",
    "tuple",
];

/// Whether a class deriving from `base` (its last segment: `collections.abc.MutableMapping`)
/// is one of `language`'s built-in kinds of value.
pub fn is_builtin_base(language: &str, base: &str) -> bool {
    let base = base.rsplit(['.', ':']).next().unwrap_or(base);
    match language {
        "python" => PYTHON_BASES.binary_search(&base).is_ok(),
        _ => false,
    }
}

/// Whether `name` is a method or attribute of one of `language`'s built-in types (only Python's
/// are listed: where types are declared, a receiver is seldom unknown).
pub fn is_builtin_member(language: &str, name: &str) -> bool {
    match language {
        "python" => PYTHON.binary_search(&name).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_answers_by_language() {
        assert!(PYTHON.windows(2).all(|w| w[0] < w[1]));
        assert!(PYTHON_BASES.windows(2).all(|w| w[0] < w[1]));
        assert!(is_builtin_base("python", "collections.abc.MutableMapping") && !is_builtin_base("python", "Cache"));
        assert!(is_builtin_member("python", "update") && is_builtin_member("python", "append"));
        assert!(!is_builtin_member("python", "invoke") && !is_builtin_member("rust", "update"));
    }
}
