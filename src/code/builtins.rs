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

/// JavaScript's built-in types' prototype members (`Array`, `Map`, `Set`, `WeakMap`,
/// `WeakSet`, `String`, `Object`, `Function`, `Promise`, `RegExp`, `Number`, `Date`, `Error`,
/// `Symbol`, `ArrayBuffer` and the typed arrays), as Node 20 gives them
/// (`Object.getOwnPropertyNames` of each prototype, less `constructor` and `__…__`), sorted.
/// TypeScript's are the same.
const JAVASCRIPT: &[&str] = &[
    "add",
    "anchor",
    "apply",
    "arguments",
    "at",
    "big",
    "bind",
    "blink",
    "bold",
    "buffer",
    "byteLength",
    "byteOffset",
    "call",
    "caller",
    "catch",
    "charAt",
    "charCodeAt",
    "clear",
    "codePointAt",
    "compile",
    "concat",
    "copyWithin",
    "delete",
    "description",
    "dotAll",
    "endsWith",
    "entries",
    "every",
    "exec",
    "fill",
    "filter",
    "finally",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "fixed",
    "flags",
    "flat",
    "flatMap",
    "fontcolor",
    "fontsize",
    "forEach",
    "get",
    "getDate",
    "getDay",
    "getFullYear",
    "getHours",
    "getMilliseconds",
    "getMinutes",
    "getMonth",
    "getSeconds",
    "getTime",
    "getTimezoneOffset",
    "getUTCDate",
    "getUTCDay",
    "getUTCFullYear",
    "getUTCHours",
    "getUTCMilliseconds",
    "getUTCMinutes",
    "getUTCMonth",
    "getUTCSeconds",
    "getYear",
    "global",
    "has",
    "hasIndices",
    "hasOwnProperty",
    "ignoreCase",
    "includes",
    "indexOf",
    "isPrototypeOf",
    "isWellFormed",
    "italics",
    "join",
    "keys",
    "lastIndexOf",
    "length",
    "link",
    "localeCompare",
    "map",
    "match",
    "matchAll",
    "maxByteLength",
    "message",
    "multiline",
    "name",
    "normalize",
    "padEnd",
    "padStart",
    "pop",
    "propertyIsEnumerable",
    "push",
    "reduce",
    "reduceRight",
    "repeat",
    "replace",
    "replaceAll",
    "resizable",
    "resize",
    "reverse",
    "search",
    "set",
    "setDate",
    "setFullYear",
    "setHours",
    "setMilliseconds",
    "setMinutes",
    "setMonth",
    "setSeconds",
    "setTime",
    "setUTCDate",
    "setUTCFullYear",
    "setUTCHours",
    "setUTCMilliseconds",
    "setUTCMinutes",
    "setUTCMonth",
    "setUTCSeconds",
    "setYear",
    "shift",
    "size",
    "slice",
    "small",
    "some",
    "sort",
    "source",
    "splice",
    "split",
    "startsWith",
    "sticky",
    "strike",
    "sub",
    "subarray",
    "substr",
    "substring",
    "sup",
    "test",
    "then",
    "toDateString",
    "toExponential",
    "toFixed",
    "toGMTString",
    "toISOString",
    "toJSON",
    "toLocaleDateString",
    "toLocaleLowerCase",
    "toLocaleString",
    "toLocaleTimeString",
    "toLocaleUpperCase",
    "toLowerCase",
    "toPrecision",
    "toReversed",
    "toSorted",
    "toSpliced",
    "toString",
    "toTimeString",
    "toUTCString",
    "toUpperCase",
    "toWellFormed",
    "trim",
    "trimEnd",
    "trimLeft",
    "trimRight",
    "trimStart",
    "unicode",
    "unicodeSets",
    "unshift",
    "valueOf",
    "values",
    "with",
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
/// are listed: where types are declared, a receiver is seldom unknown; JavaScript's methods
/// share their names with too many of a library's own, `test`, `concat`, `filter`, for a call
/// of one not to be matched by its name).
pub fn is_builtin_member(language: &str, name: &str) -> bool {
    match language {
        "python" => PYTHON.binary_search(&name).is_ok(),
        _ => false,
    }
}

/// Whether `name` is a member of one of `language`'s built-in types, JavaScript's (and so
/// TypeScript's) too: a call `x.push(…)` on an object of unknown type is an array's before it
/// is a function of the repo that no name reaches otherwise (`push` of the object
/// `makeProxyUtils` is handed).
pub fn is_builtin_name(language: &str, name: &str) -> bool {
    match language {
        "javascript" | "typescript" => JAVASCRIPT.binary_search(&name).is_ok(),
        _ => is_builtin_member(language, name),
    }
}

/// What a test writes to make Python call `str()` on a value: the built-ins and formats that
/// print one (`pytest.raises(…, match=)` prints the exception it caught).
const PYTHON_STR_SYNTAX: &[&str] = &["str(", "print(", "format(", "f\"", "f'", "%s", "%(", "match="];
/// … and `repr()`.
const PYTHON_REPR_SYNTAX: &[&str] = &["repr(", "!r", "%r", "pformat", "pprint"];
/// Either: a class without a `__str__` of its own prints by its `__repr__`.
const PYTHON_REPR_OR_STR_SYNTAX: &[&str] =
    &["repr(", "!r", "%r", "pformat", "pprint", "str(", "print(", "format(", "f\"", "f'", "%s", "%(", "match="];

/// The text a Python test must write for the language to call special method `name` on a
/// value it holds: the built-in or operator that runs it (`repr(x)`, `a & b`, `len(x)`, `del
/// x[k]`, `with x:`); `None` for a method that runs without one its reader could point at
/// (`__eq__`, `__hash__`, `__iter__`, `__getitem__`, `__getattr__`: comparisons in
/// containers, iteration, indexing and attribute access are everywhere) or that the library's
/// own code calls as often as a test (`__setitem__`: a mapping's `update`). A test that builds
/// the value but writes none of these does not run it (h2's events' `__repr__`s were credited
/// to every test that receives an event). `has_str`: the class defines `__str__` too.
pub fn python_special_method_syntax(name: &str, has_str: bool) -> Option<&'static [&'static str]> {
    Some(match name {
        "__repr__" if has_str => PYTHON_REPR_SYNTAX,
        "__repr__" => PYTHON_REPR_OR_STR_SYNTAX,
        "__str__" => PYTHON_STR_SYNTAX,
        "__format__" => &["format(", "f\"", "f'"],
        "__len__" => &["len("],
        "__contains__" => &[" in "],
        "__delitem__" => &["del ", "pop(", "popitem(", "clear("],
        "__and__" | "__rand__" | "__iand__" => &["&"],
        "__or__" | "__ror__" | "__ior__" => &["|"],
        "__xor__" | "__rxor__" | "__ixor__" => &["^"],
        "__invert__" => &["~"],
        "__lshift__" | "__rlshift__" | "__ilshift__" => &["<<"],
        "__rshift__" | "__rrshift__" | "__irshift__" => &[">>"],
        "__add__" | "__radd__" | "__iadd__" | "__pos__" => &["+", "sum("],
        "__sub__" | "__rsub__" | "__isub__" | "__neg__" => &["-"],
        "__mul__" | "__rmul__" | "__imul__" => &["*"],
        "__matmul__" | "__rmatmul__" | "__imatmul__" => &["@"],
        "__truediv__" | "__rtruediv__" | "__itruediv__" | "__floordiv__" | "__rfloordiv__" | "__ifloordiv__" => &["/"],
        "__mod__" | "__rmod__" | "__imod__" => &["%"],
        "__pow__" | "__rpow__" | "__ipow__" => &["**", "pow("],
        "__divmod__" | "__rdivmod__" => &["divmod("],
        "__abs__" => &["abs("],
        "__round__" => &["round("],
        "__int__" => &["int("],
        "__float__" => &["float("],
        "__complex__" => &["complex("],
        "__bytes__" => &["bytes("],
        "__lt__" | "__le__" | "__gt__" | "__ge__" => &["<", ">", "sort", "min(", "max("],
        "__copy__" => &["copy"],
        "__deepcopy__" => &["deepcopy"],
        "__reduce__" | "__reduce_ex__" | "__getstate__" | "__setstate__" | "__getnewargs__" | "__getnewargs_ex__" => {
            &["pickle", "copy"]
        }
        "__enter__" | "__exit__" => &["with "],
        "__aenter__" | "__aexit__" => &["async with"],
        "__aiter__" | "__anext__" => &["async for"],
        "__await__" => &["await"],
        "__instancecheck__" => &["isinstance("],
        "__subclasscheck__" => &["issubclass("],
        "__dir__" => &["dir("],
        "__sizeof__" => &["getsizeof"],
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_answers_by_language() {
        assert!(PYTHON.windows(2).all(|w| w[0] < w[1]));
        assert!(JAVASCRIPT.windows(2).all(|w| w[0] < w[1]));
        assert!(is_builtin_name("typescript", "push") && !is_builtin_name("javascript", "removeImport"));
        assert!(PYTHON_BASES.windows(2).all(|w| w[0] < w[1]));
        assert!(is_builtin_base("python", "collections.abc.MutableMapping") && !is_builtin_base("python", "Cache"));
        assert!(is_builtin_member("python", "update") && is_builtin_member("python", "append"));
        assert!(!is_builtin_member("python", "invoke") && !is_builtin_member("rust", "update"));
    }

    #[test]
    fn a_special_method_is_run_by_its_syntax() {
        assert!(python_special_method_syntax("__repr__", true).unwrap().contains(&"repr("));
        assert!(!python_special_method_syntax("__repr__", true).unwrap().contains(&"print("));
        // Without a `__str__`, printing runs `__repr__`.
        assert!(python_special_method_syntax("__repr__", false).unwrap().contains(&"print("));
        assert_eq!(python_special_method_syntax("__len__", false), Some(&["len("][..]));
        assert!(python_special_method_syntax("__eq__", false).is_none());
        assert!(python_special_method_syntax("__setitem__", false).is_none());
        assert!(python_special_method_syntax("__init__", false).is_none());
    }
}
