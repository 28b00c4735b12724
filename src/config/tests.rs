//! Unit tests of the module beside it (kept apart so the module reads in one go).

use super::load::CHANGED_DEFAULTS;
use super::*;

#[test]
fn values_out_of_range_are_refused_with_their_key_and_a_bad_log_level_is_named() {
    let with = |text: &str| check_ranges(&parse(text).unwrap().0);
    assert!(with("").is_ok());
    let err = with("[search]\nmax_repo_hits = 0\n").unwrap_err();
    assert!(err.contains("search.max_repo_hits") && err.contains("at least 1"), "{err}");
    let err = with("[search]\nweb_trigger_threshold = 7\n").unwrap_err();
    assert!(err.contains("search.web_trigger_threshold") && err.contains("between 0 and 1"), "{err}");
    assert!(with("[search]\nmax_repo_hits = 100000\n").unwrap_err().contains("at most"));
    for (section, key) in [("web", "max_pages"), ("llm", "max_answer_tokens"), ("server", "mcp_max_result_tokens")] {
        let err = with(&format!("[{section}]\n{key} = 0\n")).unwrap_err();
        assert!(err.contains(&format!("{section}.{key} = 0")), "{err}");
    }
    assert!(with("[search]\nfusion_k = -1\n").unwrap_err().contains("search.fusion_k"));
    let (config, _) = parse("[core]\nlog_level = \"loud\"\n").unwrap();
    let warnings = value_warnings(&config);
    assert!(warnings.iter().any(|w| w.contains("core.log_level") && w.contains("loud")), "{warnings:?}");
}

#[test]
fn shipped_example_parses_to_the_defaults() {
    let (config, unknown) = parse(DEFAULT_CONFIG_TOML).unwrap();
    assert!(unknown.is_empty(), "{unknown:?}");
    assert_eq!(config, Config::default());
}

#[test]
fn the_first_run_file_sets_nothing_and_shows_every_default() {
    let written = first_run_config();
    let (config, unknown) = parse(&written).unwrap();
    assert!(unknown.is_empty(), "{unknown:?}");
    assert_eq!(config, Config::default());
    // Every setting of the example is there, commented out, and nothing but tables is live.
    let settings = |text: &str, prefix: &str| {
        text.lines()
            .filter(|l| {
                l.strip_prefix(prefix)
                    .is_some_and(|l| l.contains(" = ") && l.starts_with(|c: char| c.is_ascii_lowercase()))
            })
            .count()
    };
    assert_eq!(settings(&written, "# "), settings(DEFAULT_CONFIG_TOML, "") + settings(DEFAULT_CONFIG_TOML, "# "));
    assert!(settings(&written, "# ") > 60);
    assert!(written.lines().all(|l| l.is_empty() || l.starts_with('#') || l.starts_with('[')), "{written}");
    // A user who uncomments a line gets that value.
    let edited = written.replace("# max_repo_hits = 10", "max_repo_hits = 3");
    assert_eq!(parse(&edited).unwrap().0.search.max_repo_hits, 3);
}

#[test]
fn an_old_first_run_default_is_pointed_out() {
    let notes = stale_default_notes("[search]\nexpand_embedding = false\n");
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("now true"), "{notes:?}");
    assert!(stale_default_notes("[search]\nexpand_embedding = true\n").is_empty());
    let notes = stale_default_notes("[embedding]\nbatch_size = 16\nthreads = 2\n[index]\nbatch_max_bytes = 16777216\n");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(stale_default_notes(&first_run_config()).is_empty());
    // Every old value parses, and none is today's default.
    assert!(stale_default_notes(DEFAULT_CONFIG_TOML).is_empty());
    for (section, key, old, _) in CHANGED_DEFAULTS {
        assert_eq!(stale_default_notes(&format!("[{section}]\n{key} = {old}\n")).len(), 1, "{section}.{key}");
    }
    assert!(stale_default_notes("not toml [").is_empty());
}

#[test]
fn an_allowed_root_that_is_no_directory_is_a_warning() {
    let root = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    let joined = format!("{},/srv/other", root.path().display());
    config.repos.allowed_roots = vec![root.path().to_path_buf(), PathBuf::from(&joined)];
    let warnings = value_warnings(&config);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(&format!("`{joined}` is not a directory")), "{warnings:?}");
}

#[test]
fn an_unknown_llm_provider_is_a_warning() {
    let (config, _) = parse("[llm]\nprovider = \"bard\"\n").unwrap();
    let warnings = value_warnings(&config);
    assert!(warnings[0].contains("`bard` is unknown"), "{warnings:?}");
    assert!(value_warnings(&Config::default()).is_empty());
}

#[test]
fn unknown_keys_are_reported_not_fatal() {
    let (config, unknown) = parse("[search]\nmax_repo_hits = 3\nmax_rpeo_hits = 4\n[bogus]\nx = 1\n").unwrap();
    assert_eq!(config.search.max_repo_hits, 3);
    assert_eq!(unknown, vec!["bogus".to_string(), "search.max_rpeo_hits".to_string()]);
}

#[test]
fn a_retired_key_gets_its_own_warning() {
    let (config, mut unknown) = parse("[search]\nrrf_k = 10.0\nmax_rpeo_hits = 4\n").unwrap();
    assert_eq!(config.search.fusion_k, 3.0);
    let warnings = retired_key_warnings(&mut unknown);
    assert_eq!(unknown, vec!["search.max_rpeo_hits".to_string()]);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("search.fusion_k"), "{warnings:?}");
}

#[test]
fn wrong_types_are_errors_naming_the_key() {
    let err = parse("[search]\nmax_repo_hits = \"ten\"\n").unwrap_err();
    assert!(err.contains("max_repo_hits"), "{err}");
}
