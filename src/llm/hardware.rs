//! Hardware-aware model advice: total RAM (sysinfo) and GPU VRAM where it can be read
//! (`nvidia-smi`, or the amdgpu sysfs counters), matched against the shipped
//! `config/llm_list.json`. Advisory only: nothing is ever pulled or installed from here.

use serde::{Deserialize, Serialize};

/// The shipped model list.
pub const LLM_LIST_JSON: &str = include_str!("../../config/llm_list.json");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tier {
    pub name: String,
    pub min_ram_gb: f64,
    pub needs_gpu: bool,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    pub name: String,
    pub tier: String,
    pub params: String,
    pub download_gb: f64,
    pub min_ram_gb: f64,
    pub min_vram_gb: f64,
    pub context_window: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmList {
    pub tiers: Vec<Tier>,
    pub models: Vec<ModelSpec>,
}

pub fn shipped_list() -> LlmList {
    serde_json::from_str(LLM_LIST_JSON).expect("config/llm_list.json is valid (checked by a unit test)")
}

/// What this machine has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    pub ram_gb: f64,
    /// Total VRAM of the largest GPU found; `None` means no GPU detected (CPU only).
    pub vram_gb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Given on the command line instead of detected.
    pub simulated: bool,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Reads RAM with sysinfo and VRAM where the driver exposes it.
pub fn detect() -> Hardware {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    let ram_gb = system.total_memory() as f64 / GIB;
    let (gpu, vram_gb) = detect_gpu().map(|(name, vram)| (Some(name), Some(vram))).unwrap_or((None, None));
    Hardware { ram_gb, vram_gb, gpu, simulated: false }
}

/// Best effort: NVIDIA through `nvidia-smi`, AMD through amdgpu's sysfs counter.
fn detect_gpu() -> Option<(String, f64)> {
    if let Ok(out) = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=name,memory.total", "--format=csv,noheader,nounits"])
        .stderr(std::process::Stdio::null())
        .output()
    {
        if out.status.success() {
            let text = String::from_utf8_lossy(&out.stdout);
            let best = text
                .lines()
                .filter_map(|line| {
                    let (name, mib) = line.rsplit_once(',')?;
                    Some((name.trim().to_string(), mib.trim().parse::<f64>().ok()? / 1024.0))
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if best.is_some() {
                return best;
            }
        }
    }
    let cards = std::fs::read_dir("/sys/class/drm").ok()?;
    cards
        .flatten()
        .filter_map(|card| {
            let bytes = std::fs::read_to_string(card.path().join("device/mem_info_vram_total")).ok()?;
            let vram = bytes.trim().parse::<f64>().ok()? / GIB;
            (vram > 0.0).then(|| (format!("amdgpu {}", card.file_name().to_string_lossy()), vram))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// One model of the list, judged for this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelAdvice {
    #[serde(flatten)]
    pub spec: ModelSpec,
    pub fits: bool,
    /// On the configured server; `None` when the server could not be asked.
    pub installed: Option<bool>,
    pub recommended: bool,
}

/// The advice `llm-list` and `llm-setup` print.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    pub hardware: Hardware,
    pub tier: Tier,
    pub recommended: Option<String>,
    /// Why the recommendation is what it is (e.g. a larger model that fits but is not pulled).
    pub notes: Vec<String>,
    pub models: Vec<ModelAdvice>,
}

/// A machine sold as "16 GB" shows the OS 15.5–15.7 GiB (firmware and GPU carve-outs):
/// RAM is compared with 4% of slack so it lands in its advertised tier.
fn ram_with_slack(hw: &Hardware) -> f64 {
    hw.ram_gb * 1.04
}

fn fits(spec: &ModelSpec, hw: &Hardware) -> bool {
    ram_with_slack(hw) >= spec.min_ram_gb && (spec.min_vram_gb <= 0.0 || hw.vram_gb.unwrap_or(0.0) >= spec.min_vram_gb)
}

/// The highest tier the machine reaches (RAM with slack, see `ram_with_slack`).
pub fn tier_for<'a>(list: &'a LlmList, hw: &Hardware) -> &'a Tier {
    list.tiers
        .iter()
        .filter(|t| ram_with_slack(hw) >= t.min_ram_gb && (!t.needs_gpu || hw.vram_gb.is_some()))
        .max_by(|a, b| a.min_ram_gb.total_cmp(&b.min_ram_gb))
        .unwrap_or(&list.tiers[0])
}

/// Whether `name` is among the server's models (`phi3.5:3.8b` matches `phi3.5:3.8b` and a
/// bare `phi3.5` matches `phi3.5:latest`).
pub fn is_installed(name: &str, installed: &[String]) -> bool {
    let norm = |n: &str| if n.contains(':') { n.to_string() } else { format!("{n}:latest") };
    installed.iter().any(|i| norm(i) == norm(name))
}

/// Recommends a model: the machine's tier, an installed model of it first, else the tier's
/// first model. A large-tier machine without the large model pulled is advised the default
/// tier's model (the large one is "if present", never a 40 GB surprise) with a note.
pub fn advise(list: &LlmList, hw: &Hardware, installed_opt: Option<&[String]>) -> Advice {
    let tier = tier_for(list, hw).clone();
    let installed_of = |spec: &ModelSpec| installed_opt.map(|names| is_installed(&spec.name, names));
    let pick = |tier_name: &str| -> Option<&ModelSpec> {
        let candidates: Vec<&ModelSpec> = list.models.iter().filter(|m| m.tier == tier_name && fits(m, hw)).collect();
        candidates.iter().find(|m| installed_of(m) == Some(true)).or(candidates.first()).copied()
    };
    let mut notes = Vec::new();
    let mut chosen = pick(&tier.name);
    if tier.needs_gpu {
        if let Some(large) = chosen.filter(|m| installed_of(m) != Some(true)) {
            notes.push(format!(
                "{} fits this machine ({} GB download); pull it to use it: `ollama pull {}`",
                large.name, large.download_gb, large.name
            ));
            let lower = list
                .tiers
                .iter()
                .filter(|t| !t.needs_gpu && t.min_ram_gb <= ram_with_slack(hw))
                .max_by(|a, b| a.min_ram_gb.total_cmp(&b.min_ram_gb));
            chosen = lower.and_then(|t| pick(&t.name)).or(chosen);
        }
    }
    if hw.vram_gb.is_none() {
        notes.push("no GPU detected: models run on the CPU".into());
    }
    let recommended = chosen.map(|m| m.name.clone());
    let models = list
        .models
        .iter()
        .map(|spec| ModelAdvice {
            spec: spec.clone(),
            fits: fits(spec, hw),
            installed: installed_of(spec),
            recommended: Some(&spec.name) == recommended.as_ref(),
        })
        .collect();
    Advice { hardware: hw.clone(), tier, recommended, notes, models }
}

/// Whether the configured model is bigger than this machine should run (for `check`).
pub fn oversized(list: &LlmList, hw: &Hardware, model: &str) -> Option<String> {
    let spec = list.models.iter().find(|m| is_installed(&m.name, &[model.to_string()]))?;
    (!fits(spec, hw)).then(|| {
        format!(
            "{} needs {} GB of RAM{}; this machine has {:.1} GB",
            spec.name,
            spec.min_ram_gb,
            if spec.min_vram_gb > 0.0 { format!(" and {} GB of VRAM", spec.min_vram_gb) } else { String::new() },
            hw.ram_gb
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hw(ram_gb: f64, vram_gb: Option<f64>) -> Hardware {
        Hardware { ram_gb, vram_gb, gpu: vram_gb.map(|_| "test gpu".into()), simulated: true }
    }

    #[test]
    fn the_shipped_list_parses_and_every_model_has_a_tier() {
        let list = shipped_list();
        for model in &list.models {
            assert!(list.tiers.iter().any(|t| t.name == model.tier), "{} has no tier", model.name);
        }
    }

    #[test]
    fn tiers_follow_ram_and_gpu() {
        let list = shipped_list();
        assert_eq!(tier_for(&list, &hw(4.0, None)).name, "ultra-light");
        assert_eq!(tier_for(&list, &hw(7.2, None)).name, "ultra-light");
        // Machines sold as 8 and 16 GB report a bit less to the OS.
        assert_eq!(tier_for(&list, &hw(7.7, None)).name, "light");
        assert_eq!(tier_for(&list, &hw(12.0, None)).name, "light");
        assert_eq!(tier_for(&list, &hw(15.0, None)).name, "light");
        assert_eq!(tier_for(&list, &hw(15.6, None)).name, "default");
        assert_eq!(tier_for(&list, &hw(64.0, None)).name, "default");
        assert_eq!(tier_for(&list, &hw(64.0, Some(24.0))).name, "large");
    }

    #[test]
    fn every_model_asks_for_at_least_the_memory_it_takes() {
        // Its weights, plus a fifth for the context's cache and the runtime: a 43 GB model
        // said to need 32 GB of RAM (and 16 of VRAM) sent people to a machine it swaps on.
        for spec in &shipped_list().models {
            let memory = spec.min_ram_gb + spec.min_vram_gb;
            assert!(memory >= spec.download_gb * 1.2, "{} takes {} GB, asks for {memory}", spec.name, spec.download_gb);
        }
    }

    #[test]
    fn recommendations_per_tier() {
        let list = shipped_list();
        assert_eq!(advise(&list, &hw(6.0, None), None).recommended.as_deref(), Some("qwen2.5:0.5b"));
        assert_eq!(advise(&list, &hw(16.0, None), None).recommended.as_deref(), Some("phi3.5:3.8b"));
        // An installed model of the tier wins over the tier's first.
        let installed = vec!["qwen2.5-coder:7b".to_string()];
        assert_eq!(advise(&list, &hw(16.0, None), Some(&installed)).recommended.as_deref(), Some("qwen2.5-coder:7b"));
        // Large tier: the 70B only when it is already there.
        let big = advise(&list, &hw(64.0, Some(24.0)), Some(&[]));
        assert_eq!(big.recommended.as_deref(), Some("phi3.5:3.8b"));
        assert!(big.notes.iter().any(|n| n.contains("llama3.1:70b")));
        let installed = vec!["llama3.1:70b".to_string()];
        assert_eq!(advise(&list, &hw(64.0, Some(24.0)), Some(&installed)).recommended.as_deref(), Some("llama3.1:70b"));
        let advice = advise(&list, &hw(6.0, None), Some(&["llama3.2:1b".to_string()]));
        assert_eq!(advice.recommended.as_deref(), Some("llama3.2:1b"));
        assert!(!advice.models.iter().find(|m| m.spec.name == "phi3.5:3.8b").unwrap().fits);
    }

    #[test]
    fn oversized_models_are_named() {
        let list = shipped_list();
        assert!(oversized(&list, &hw(8.0, None), "phi3.5:3.8b").unwrap().contains("16 GB"));
        assert!(oversized(&list, &hw(32.0, None), "phi3.5:3.8b").is_none());
        assert!(oversized(&list, &hw(8.0, None), "my-own-model").is_none());
        assert!(is_installed("phi3.5", &["phi3.5:latest".to_string()]));
    }
}
