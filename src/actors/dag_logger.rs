//! DagLogger: appends reasoning-DAG nodes to a repo's LMDB environment. A sync actor with
//! one thread, so the appends of a session land in the order they were sent and LMDB's
//! blocking commits stay off the async workers.

use std::sync::Arc;

use actix::{Actor, Handler, Message, SyncContext};

use crate::index::dag::{DagNode, DagSession};
use crate::index::RepoIndex;
use crate::protocol::Result;

pub struct DagLogger;

impl Actor for DagLogger {
    type Context = SyncContext<Self>;
}

/// Appends nodes to a session (the session is created by its first append).
#[derive(Message)]
#[rtype(result = "Result<()>")]
pub struct AppendDag {
    pub index: Arc<RepoIndex>,
    pub session: DagSession,
    pub nodes: Vec<DagNode>,
}

impl Handler<AppendDag> for DagLogger {
    type Result = Result<()>;

    fn handle(&mut self, msg: AppendDag, _: &mut SyncContext<Self>) -> Self::Result {
        super::guarded("the DAG logger", || {
            let store = &msg.index.store;
            let mut wtxn = store.write_txn()?;
            store.append_dag(&mut wtxn, &msg.session, &msg.nodes)?;
            wtxn.commit()?;
            Ok(())
        })
    }
}
