//! Finding and reaching the daemon that serves a `DOCDEX_HOME`: its lock file (`lock`) and the
//! client a command uses to run through it, or in this process when none runs (`client`).

pub mod client;
pub mod lock;
