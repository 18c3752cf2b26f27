//! The order a commit's requests go out in (`mod.rs`): the page puts, every SST's metadata page
//! before any data page, then the deletes, as one request per run of adjacent pages, then the
//! manifest. The puts go out in slices, a task each; the deletes and the manifest go out after
//! the last slice, all in one task, with nothing awaited between them. So a transaction that
//! commits by itself part-way (a commit whose future was polled once, then neither polled again
//! nor dropped) lands at most the first puts, never a delete nor the manifest. For the engine's
//! commits that is harmless: those of more than one write (flushes, compactions, reclaims) put
//! only the pages of new SSTs, which no stored manifest names (its WAL pages go in commits of
//! their own), and any data page that lands comes with its SST's metadata page, which the next
//! open's recovery finds and deletes as an SST nothing references. (A handle that goes on after
//! such a failure may first write an SST of the same id over them; data pages past its last then
//! stay stored, never read, until the database is destroyed.)

use ttlkv::store::{PageId, PageKind};

use super::super::page_key::stored_id;

/// A commit's puts in the order they are issued: every page but the SST data pages first (an SST's
/// metadata page is how recovery finds the pages of an SST nothing references), then the data
/// pages, each group in the commit's order.
pub(super) fn puts_in_order(
    puts: &[(PageId, Vec<u8>)],
) -> impl Iterator<Item = &(PageId, Vec<u8>)> {
    let data = |(id, _): &&(PageId, Vec<u8>)| id.kind == PageKind::SstData;
    puts.iter()
        .filter(move |p| !data(p))
        .chain(puts.iter().filter(data))
}

/// A commit's deletes as inclusive runs of adjacent pages, ascending, each one request (a key
/// range over the run). Two pages are adjacent when no other page of the store can sort between
/// them: the next WAL segment, the next SST's metadata page, the next data page of the same SST.
/// A page the commit also puts is left out: in one commit deletes apply before puts, so the put's
/// bytes stand, and the deletes now go out after the puts.
pub(super) fn delete_runs(deletes: &[PageId], puts: &[(PageId, Vec<u8>)]) -> Vec<(PageId, PageId)> {
    // Most commits (every durable put's) delete nothing: no list of their puts is made for them.
    if deletes.is_empty() {
        return Vec::new();
    }
    let mut put = puts.iter().map(|(id, _)| stored_id(*id)).collect();
    PageId::sort(&mut put);
    let mut ids = deletes.iter().map(|id| stored_id(*id)).collect();
    PageId::sort(&mut ids);
    let mut runs: Vec<(PageId, PageId)> = Vec::new();
    for id in ids {
        if put.binary_search(&id).is_ok() {
            continue;
        }
        match runs.last_mut() {
            Some((_, last)) if follows(*last, id) => *last = id,
            _ => runs.push((id, id)),
        }
    }
    runs
}

/// Whether `next` is the page right after `page`, with no other page id between them.
fn follows(page: PageId, next: PageId) -> bool {
    page.kind == next.kind
        && match next.kind {
            PageKind::SstData => {
                page.file == next.file && page.index.checked_add(1) == Some(next.index)
            }
            PageKind::Wal | PageKind::SstMeta => page.file.checked_add(1) == Some(next.file),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_group_into_runs_of_adjacent_pages_and_leave_out_pages_also_put() {
        let deletes = [
            PageId::sst_data(5, 3),
            PageId::sst_data(5, 0),
            PageId::sst_data(5, 1),
            PageId::sst_data(6, 0),
            PageId::wal(2),
            PageId::wal(1),
            PageId::wal(1),
            PageId::wal(4),
            PageId::sst_meta(5),
            PageId::sst_meta(6),
            PageId::sst_meta(7),
            PageId::sst_data(8, 0),
            PageId::sst_data(8, 1),
            PageId::sst_data(8, 2),
        ];
        let puts = [
            (PageId::sst_meta(7), vec![]),
            (PageId::sst_data(8, 1), vec![]),
        ];
        assert_eq!(
            delete_runs(&deletes, &puts),
            [
                (PageId::wal(1), PageId::wal(2)),
                (PageId::wal(4), PageId::wal(4)),
                (PageId::sst_meta(5), PageId::sst_meta(6)),
                // data page 2 of SST 5 is not deleted; SST 6's first page is no neighbour of 5's.
                (PageId::sst_data(5, 0), PageId::sst_data(5, 1)),
                (PageId::sst_data(5, 3), PageId::sst_data(5, 3)),
                (PageId::sst_data(6, 0), PageId::sst_data(6, 0)),
                (PageId::sst_data(8, 0), PageId::sst_data(8, 0)),
                (PageId::sst_data(8, 2), PageId::sst_data(8, 2)),
            ]
        );
        assert!(delete_runs(&[], &puts).is_empty());
        // A WAL or metadata page's key has no index: an id that differs only there is the same
        // record, put by the commit, so not deleted.
        let odd = PageId {
            index: 1,
            ..PageId::wal(9)
        };
        assert!(delete_runs(&[PageId::wal(9)], &[(odd, vec![])]).is_empty());
    }

    #[test]
    fn metadata_pages_are_put_before_every_data_page() {
        let puts = [
            (PageId::sst_data(9, 0), vec![0]),
            (PageId::sst_data(9, 1), vec![1]),
            (PageId::sst_meta(9), vec![2]),
            (PageId::sst_data(10, 0), vec![3]),
            (PageId::sst_meta(10), vec![4]),
            (PageId::wal(3), vec![5]),
        ];
        let order: Vec<u8> = puts_in_order(&puts).map(|(_, bytes)| bytes[0]).collect();
        assert_eq!(order, [2, 4, 5, 0, 1, 3]);
    }
}
