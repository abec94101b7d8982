//! Chained block hashes over a prompt's segments and a reply's tokens, as vLLM's
//! `hash_block_tokens`: equal hashes mean equal prefixes.

use crate::workload::{mix64, reply_content, Prompt, Segment};

/// Seed of the hash chain (the "parent hash" of block 0).
pub(super) const HASH_SEED: u64 = 0x6b76_5f63_6163_6865;

/// Appends the chained hash of every full block of `prompt` to `out`.
///
/// The hash of block `i` mixes the hash of block `i - 1` with the pieces of segments covering
/// tokens `[i b, (i + 1) b)`: each piece as (content, offset within its segment, length). Token
/// `j` of a segment is "token `j` of that content", so equal token runs give equal pieces.
/// Like vLLM's `hash_block_tokens`, the chain makes a block's hash depend on its whole prefix.
/// The walk is O(blocks + segments), never per token.
#[cfg(test)]
pub(crate) fn prompt_block_hashes(prompt: &Prompt, block_size: u32, out: &mut Vec<u64>) {
    for_each_block_hash(prompt, block_size, |h| {
        out.push(h);
        true
    });
}

/// Calls `f` with the chained hash of each full block of `prompt` in order, until `f` returns
/// false (so a prefix lookup stops at its first miss instead of hashing a whole long prompt).
pub(crate) fn for_each_block_hash(prompt: &Prompt, block_size: u32, f: impl FnMut(u64) -> bool) {
    for_each_segment_block_hash(prompt.segments.iter(), block_size, f)
}

/// Appends the chained hash of every full block of a request's whole token sequence: its
/// prompt, then the first `reply_len` tokens of its reply (content [`reply_content`]). Blocks
/// filled by generated tokens are hashed and cached like prompt blocks, as in vLLM
/// (`Request.append_output_token_ids` hashes each newly full block), so the next turn of a
/// chat, whose prompt resends this reply, hits them too.
pub(crate) fn sequence_block_hashes(
    prompt: &Prompt,
    reply_len: u32,
    block_size: u32,
    out: &mut Vec<u64>,
) {
    let reply = Segment {
        content: reply_content(prompt),
        len: reply_len,
    };
    let segments = prompt.segments.iter().chain(std::iter::once(&reply));
    for_each_segment_block_hash(segments, block_size, |h| {
        out.push(h);
        true
    });
}

fn for_each_segment_block_hash<'a>(
    segments: impl Iterator<Item = &'a Segment>,
    block_size: u32,
    mut f: impl FnMut(u64) -> bool,
) {
    let bs = block_size.max(1);
    let mut h = HASH_SEED;
    let mut filled = 0u32;
    for seg in segments {
        let mut offset = 0u32;
        while offset < seg.len {
            // Whole blocks inside the segment, the common case, without the piece arithmetic.
            while filled == 0 && seg.len - offset >= bs {
                let piece = seg.content ^ ((offset as u64) << 32 | bs as u64).rotate_left(17);
                h = mix64(h.rotate_left(23) ^ piece);
                offset += bs;
                if !f(h) {
                    return;
                }
            }
            if offset == seg.len {
                break;
            }
            let take = (seg.len - offset).min(bs - filled);
            // One mixing step per piece: the piece's content, offset and length enter together.
            let piece = seg.content ^ ((offset as u64) << 32 | take as u64).rotate_left(17);
            h = mix64(h.rotate_left(23) ^ piece);
            filled += take;
            offset += take;
            if filled == bs {
                if !f(h) {
                    return;
                }
                filled = 0;
            }
        }
    }
}
