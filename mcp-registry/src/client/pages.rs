//! Paged lists (`tools/list`, `prompts/list`, ..., `skills/list`): every page, following
//! `nextCursor` to the end.

use std::future::Future;

use super::ClientError;

/// Every item of a paged list: `page(cursor)` from the first page (`None`) on, following the
/// next cursor it gives until a page gives none (or an empty one).
pub(super) async fn every_page<T, F, Fut>(mut page: F) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let (items, next) = page(cursor).await?;
        all.extend(items);
        match next {
            Some(next) if !next.is_empty() => cursor = Some(next),
            _ => return Ok(all),
        }
    }
}
