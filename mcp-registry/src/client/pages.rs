//! Paged lists (`tools/list`, `prompts/list`, ..., `skills/list`): every page, following
//! `nextCursor` to the end.

use std::collections::HashSet;
use std::future::Future;

use super::ClientError;

/// Every item of the paged list `method`: `page(cursor)` from the first page (`None`) on,
/// following the next cursor it gives until a page gives none (or an empty one). A cursor
/// given twice is an error: a server whose pages loop would otherwise be followed forever,
/// the items piling up.
pub(super) async fn every_page<T, F, Fut>(method: &str, mut page: F) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ClientError>>,
{
    let mut all = Vec::new();
    let mut cursor = None;
    let mut seen = HashSet::new();
    loop {
        let (items, next) = page(cursor).await?;
        all.extend(items);
        match next {
            Some(next) if !next.is_empty() => {
                if !seen.insert(next.clone()) {
                    return Err(ClientError::InvalidResult {
                        method: method.to_owned(),
                        detail: format!(
                            "the server gave the cursor {next:?} twice: its pages loop"
                        ),
                    });
                }
                cursor = Some(next);
            }
            _ => return Ok(all),
        }
    }
}
