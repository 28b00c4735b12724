//! The web cache under `<state>/cache/web/`, shared by every repo: for each page the raw HTML
//! (`pages/<key>.html`) and the cleaned JSON (`pages/<key>.json`, a `WebPage`), and discovery
//! results (`discovery/<key>.json`), keyed by the SHA-256 of the normalised URL or query.
//! Entries older than the TTL are misses (and are overwritten by the refetch). Files are
//! written to a temporary name and renamed, so a kill never leaves a half-written entry.

use std::path::{Path, PathBuf};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::ingest::sha256_hex;
use crate::protocol::{Result, WebPage, WebResult};

#[derive(Debug, Clone)]
pub struct WebCache {
    dir: PathBuf,
    ttl_secs: u64,
}

/// Cached discovery results of one query.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedDiscovery {
    pub query: String,
    pub fetched_at_unix: u64,
    pub endpoint: String,
    pub blocked: usize,
    pub results: Vec<WebResult>,
}

impl WebCache {
    pub fn new(state_dir: &Path, ttl_secs: u64) -> WebCache {
        WebCache { dir: state_dir.join("cache").join("web"), ttl_secs }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn page_path(&self, url: &str, ext: &str) -> PathBuf {
        self.dir.join("pages").join(format!("{}.{ext}", sha256_hex(url.as_bytes())))
    }

    fn discovery_path(&self, query: &str) -> PathBuf {
        let key = query.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        self.dir.join("discovery").join(format!("{}.json", sha256_hex(key.as_bytes())))
    }

    fn fresh(&self, fetched_at_unix: u64, now_unix: u64) -> bool {
        now_unix.saturating_sub(fetched_at_unix) < self.ttl_secs
    }

    /// A cached page still within its TTL.
    pub fn page(&self, url: &str, now_unix: u64) -> Option<WebPage> {
        let page: WebPage = read_json(&self.page_path(url, "json"))?;
        self.fresh(page.fetched_at_unix, now_unix).then_some(page)
    }

    pub fn put_page(&self, page: &WebPage, raw_html: &str) -> Result<()> {
        write_atomic(&self.page_path(&page.url, "html"), raw_html.as_bytes())?;
        write_atomic(&self.page_path(&page.url, "json"), &serde_json::to_vec_pretty(page)?)
    }

    pub fn discovery(&self, query: &str, now_unix: u64) -> Option<CachedDiscovery> {
        let cached: CachedDiscovery = read_json(&self.discovery_path(query))?;
        self.fresh(cached.fetched_at_unix, now_unix).then_some(cached)
    }

    pub fn put_discovery(&self, cached: &CachedDiscovery) -> Result<()> {
        write_atomic(&self.discovery_path(&cached.query), &serde_json::to_vec_pretty(cached)?)
    }
}

/// A missing or unreadable entry is a miss (a corrupt file is simply refetched).
fn read_json<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().expect("cache paths have a parent");
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str, at: u64) -> WebPage {
        WebPage {
            url: url.into(),
            final_url: url.into(),
            title: "T".into(),
            text: "body".into(),
            fetched_at: "2026-01-01T00:00:00Z".into(),
            fetched_at_unix: at,
            content_hash: "h".into(),
            engine: "http".into(),
            from_cache: false,
            extractor: "fallback".into(),
        }
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WebCache::new(dir.path(), 100);
        cache.put_page(&page("https://a.example/x", 1000), "<html></html>").unwrap();
        assert!(cache.page("https://a.example/x", 1050).is_some());
        assert!(cache.page("https://a.example/x", 1100).is_none());
        assert!(cache.page("https://a.example/y", 1050).is_none());
        let cached = CachedDiscovery {
            query: "Tokio  JoinSet".into(),
            fetched_at_unix: 1000,
            endpoint: "primary".into(),
            blocked: 0,
            results: vec![],
        };
        cache.put_discovery(&cached).unwrap();
        assert!(cache.discovery("tokio joinset", 1099).is_some());
        assert!(cache.discovery("tokio joinset", 1101).is_none());
    }
}
