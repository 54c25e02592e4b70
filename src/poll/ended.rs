//! Why a connection's polling ended, and what a failed statement means for it: a refusal leaves
//! one fact unread, anything else ends the connection.

use crate::mysql::SqlError;

/// Why a connection's polling ended.
#[derive(Debug)]
pub(super) enum Ended {
    /// The engine stopped, or the store is gone: nothing is reported any more.
    Stopped,
    /// A statement failed: the connection is dropped and opened again after a back-off.
    Failed(SqlError),
    /// The account's grants changed since this connection opened: a server gives an open
    /// connection none of a global privilege granted since (nor takes one revoked), so the
    /// connection is opened again at once, without a back-off, to hold what the server lists.
    Regranted,
}

impl From<SqlError> for Ended {
    fn from(err: SqlError) -> Self {
        Self::Failed(err)
    }
}

/// The answer of a statement whose refusal (a privilege, a variable an unusual build lacks) or
/// unreadable answer leaves its fact unread (`None`) rather than taking the node's monitoring
/// down; a broken connection or a timeout ends the connection as any failed read does.
pub(super) fn unless_refused<T>(answer: Result<T, SqlError>) -> Result<Option<T>, Ended> {
    match answer {
        Ok(answer) => Ok(Some(answer)),
        Err(SqlError::Server { .. } | SqlError::Parse { .. }) => Ok(None),
        Err(other) => Err(other.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_refusal_leaves_a_fact_unread_and_a_broken_connection_ends() {
        let refused = SqlError::Server {
            addr: "r1:3306".to_owned(),
            sql: "SHOW GRANTS".to_owned(),
            code: 1227,
            message: "Access denied".to_owned(),
        };
        assert!(matches!(unless_refused::<u8>(Err(refused)), Ok(None)));
        assert!(matches!(unless_refused(Ok(7_u8)), Ok(Some(7))));
        let timeout = SqlError::QueryTimeout {
            addr: "r1:3306".to_owned(),
            sql: "SHOW GRANTS".to_owned(),
            after: Duration::from_secs(2),
        };
        assert!(matches!(
            unless_refused::<u8>(Err(timeout)),
            Err(Ended::Failed(SqlError::QueryTimeout { .. }))
        ));
        let lost = SqlError::Closed {
            addr: "r1:3306".to_owned(),
        };
        assert!(matches!(
            unless_refused::<u8>(Err(lost)),
            Err(Ended::Failed(SqlError::Closed { .. }))
        ));
    }
}
