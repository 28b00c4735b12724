//! What `go test` builds on this machine: a file's `_GOOS`/`_GOARCH` name suffix and its
//! `//go:build` constraint, read with this machine's OS, architecture, `unix` and Go release.

use super::{all_of, any_of};

/// Go's operating systems (`unix` is those but `js`, `plan9`, `wasip1`, `windows`, `zos`).
const GO_OSES: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "nacl",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "zos",
];
/// Go's architectures.
const GO_ARCHES: &[&str] = &[
    "386",
    "amd64",
    "amd64p32",
    "arm",
    "armbe",
    "arm64",
    "arm64be",
    "loong64",
    "mips",
    "mipsle",
    "mips64",
    "mips64le",
    "mips64p32",
    "mips64p32le",
    "ppc",
    "ppc64",
    "ppc64le",
    "riscv",
    "riscv64",
    "s390",
    "s390x",
    "sparc",
    "sparc64",
    "wasm",
];
/// The toolchain's own tags: which one builds, and whether cgo is on, is the invocation's.
const GO_TOOLCHAIN: &[&str] = &["cgo", "gc", "gccgo"];

/// The machine `go test` runs on: the daemon's own (the agent runs the tests where the daemon
/// serves the repo), so `mapper_windows_test.go` or `//go:build !go1.19` is not built on a
/// Linux machine whose Go is 1.19. What is not known stays unknown, which keeps the code.
#[derive(Debug, Clone, Default)]
pub(crate) struct GoTarget {
    os: Option<&'static str>,
    arch: Option<&'static str>,
    /// The toolchain's minor version (`go1.19.8` → 19).
    minor: Option<u32>,
}

impl GoTarget {
    /// This machine, the toolchain's version asked of `go env GOVERSION` once per process.
    pub(crate) fn host() -> &'static GoTarget {
        static HOST: std::sync::OnceLock<GoTarget> = std::sync::OnceLock::new();
        HOST.get_or_init(|| {
            let os = match std::env::consts::OS {
                "macos" => Some("darwin"),
                os => GO_OSES.iter().copied().find(|o| *o == os),
            };
            let arch = match std::env::consts::ARCH {
                "x86_64" => Some("amd64"),
                "x86" => Some("386"),
                "aarch64" => Some("arm64"),
                "loongarch64" => Some("loong64"),
                "powerpc64" if cfg!(target_endian = "little") => Some("ppc64le"),
                "powerpc64" => Some("ppc64"),
                arch => GO_ARCHES.iter().copied().find(|a| *a == arch),
            };
            let minor = std::process::Command::new("go")
                .args(["env", "GOVERSION"])
                .env("GOTOOLCHAIN", "local")
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| go_minor(&String::from_utf8_lossy(&o.stdout)));
            GoTarget { os, arch, minor }
        })
    }

    /// A build tag's value here: the machine's OS (Android builds `linux` code, iOS `darwin`,
    /// illumos `solaris`), architecture, `unix`, and the releases up to the toolchain's are
    /// on; a tag of the code's own (`integration`, `ignore`) is off without `-tags`.
    fn tag(&self, word: &str) -> Option<bool> {
        if GO_OSES.contains(&word) {
            let os = self.os?;
            return Some(
                word == os || matches!((os, word), ("android", "linux") | ("ios", "darwin") | ("illumos", "solaris")),
            );
        }
        if word == "unix" {
            return self.os.map(|os| !matches!(os, "js" | "plan9" | "wasip1" | "windows" | "zos"));
        }
        if GO_ARCHES.contains(&word) {
            return self.arch.map(|arch| arch == word);
        }
        if let Some(release) = word.strip_prefix("go1.") {
            let release: u32 = release.parse().ok()?;
            return self.minor.map(|minor| release <= minor);
        }
        if GO_TOOLCHAIN.contains(&word) {
            return None;
        }
        Some(false)
    }

    /// Whether `go` builds a file by its name's `_GOOS`, `_GOARCH` or `_GOOS_GOARCH` suffix
    /// (before `.go` and a `_test`): `mapper_windows_test.go` only on Windows.
    pub(super) fn builds_named(&self, path: &str) -> Option<bool> {
        let name = path.rsplit('/').next()?.strip_suffix(".go")?;
        let name = name.strip_suffix("_test").unwrap_or(name);
        let parts: Vec<&str> = name.split('_').collect();
        let n = parts.len();
        let last = *parts.last()?;
        if n >= 3 && GO_OSES.contains(&parts[n - 2]) && GO_ARCHES.contains(&last) {
            return Some(self.tag(parts[n - 2])? && self.tag(last)?);
        }
        // `unix` is not a file name suffix.
        if n >= 2 && (GO_OSES.contains(&last) || GO_ARCHES.contains(&last)) {
            return self.tag(last);
        }
        Some(true)
    }
}

/// The minor version in `go version`'s or `go env GOVERSION`'s answer (`go1.19.8` → 19).
fn go_minor(version: &str) -> Option<u32> {
    let rest = version.trim().strip_prefix("go1.")?;
    rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// A `//go:build` constraint's value for `go test` without `-tags` on `target`: a tag of the
/// code's own (`integration`, `e2e`, `ignore`) is off; the platform's and the Go release's as
/// `target` has them (unknown where it does not know).
pub(super) fn go_constraint(expr: &str, target: &GoTarget) -> Option<bool> {
    let tokens: Vec<String> = {
        let mut out = Vec::new();
        let mut chars = expr.chars().peekable();
        while let Some(&c) = chars.peek() {
            match c {
                c if c.is_whitespace() => {
                    chars.next();
                }
                '(' | ')' | '!' => {
                    out.push(c.to_string());
                    chars.next();
                }
                '&' | '|' => {
                    chars.next();
                    if chars.next() != Some(c) {
                        return None;
                    }
                    out.push(format!("{c}{c}"));
                }
                c if c.is_alphanumeric() || c == '_' || c == '.' => {
                    let mut word = String::new();
                    while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_' || **c == '.') {
                        word.push(c);
                        chars.next();
                    }
                    out.push(word);
                }
                _ => return None,
            }
        }
        out
    };
    /// Operands joined by `op`, each read by `operand`.
    type Operand = fn(&[String], &mut usize, &GoTarget) -> Option<Option<bool>>;
    fn joined(t: &[String], at: &mut usize, op: &str, operand: Operand, g: &GoTarget) -> Option<Vec<Option<bool>>> {
        let mut values = vec![operand(t, at, g)?];
        while t.get(*at).is_some_and(|w| w == op) {
            *at += 1;
            values.push(operand(t, at, g)?);
        }
        Some(values)
    }
    fn or(t: &[String], at: &mut usize, g: &GoTarget) -> Option<Option<bool>> {
        joined(t, at, "||", and, g).map(any_of)
    }
    fn and(t: &[String], at: &mut usize, g: &GoTarget) -> Option<Option<bool>> {
        joined(t, at, "&&", unary, g).map(all_of)
    }
    fn unary(t: &[String], at: &mut usize, g: &GoTarget) -> Option<Option<bool>> {
        let word = t.get(*at)?;
        *at += 1;
        match word.as_str() {
            "!" => Some(unary(t, at, g)?.map(|v| !v)),
            "(" => {
                let value = or(t, at, g)?;
                (t.get(*at)? == ")").then(|| *at += 1)?;
                Some(value)
            }
            ")" | "&&" | "||" => None,
            w => Some(g.tag(w)),
        }
    }
    let mut at = 0;
    let value = or(&tokens, &mut at, target)?;
    (at == tokens.len()).then_some(value).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_go_build_constraint_is_off_for_a_tag_of_the_codes_own() {
        let unknown = GoTarget::default();
        let cases = [
            ("integration", Some(false)),
            ("!integration", Some(true)),
            ("linux", None),
            ("linux && integration", Some(false)),
            ("linux || integration", None),
            ("(e2e || integration) && !windows", Some(false)),
            ("go1.21", None),
            ("ignore", Some(false)),
            ("a &", None),
            ("(a", None),
        ];
        for (expr, want) in cases {
            assert_eq!(go_constraint(expr, &unknown), want, "{expr}");
        }
    }

    #[test]
    fn a_go_file_for_another_platform_or_release_is_not_built_here() {
        let here = GoTarget { os: Some("linux"), arch: Some("amd64"), minor: Some(19) };
        let cases = [
            ("linux", Some(true)),
            ("windows", Some(false)),
            ("unix && !windows", Some(true)),
            ("darwin || freebsd", Some(false)),
            ("arm64", Some(false)),
            ("go1.18", Some(true)),
            ("!go1.19", Some(false)),
            ("go1.21", Some(false)),
            ("cgo", None),
            ("linux && cgo", None),
        ];
        for (expr, want) in cases {
            assert_eq!(go_constraint(expr, &here), want, "{expr}");
        }
        let android = GoTarget { os: Some("android"), arch: Some("arm64"), minor: None };
        assert_eq!(go_constraint("linux && arm64", &android), Some(true));
        assert_eq!(go_constraint("go1.18", &android), None);
        for (path, want) in [
            ("mapper_windows_test.go", Some(false)),
            ("pkg/mapper_linux_test.go", Some(true)),
            ("sys_linux_arm64.go", Some(false)),
            ("sys_linux_amd64.go", Some(true)),
            ("cpu_386.go", Some(false)),
            ("linux.go", Some(true)),
            ("windows_test.go", Some(true)),
            ("mapper_test.go", Some(true)),
            ("read_unix.go", Some(true)),
        ] {
            assert_eq!(here.builds_named(path), want, "{path}");
        }
        assert_eq!(GoTarget::default().builds_named("mapper_windows_test.go"), None);
        assert_eq!(go_minor("go1.19.8\n"), Some(19));
        assert_eq!(go_minor("go1.22rc1"), Some(22));
        assert_eq!(go_minor("devel +abc"), None);
    }
}
