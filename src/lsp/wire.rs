//! Reading messages off the wire without trusting the client's framing.
//!
//! A message is a header block (`Content-Length: N`, line breaks `\r\n`) and a JSON body of N
//! bytes. Clients get this wrong: one that counts characters instead of bytes sends a length too
//! short for any body with a `ö`, others end headers with `\n`. Reading exactly N bytes then leaves
//! the stream out of step (too short) or waits for bytes that never come (too long), and the
//! server falls silent. So the body is read as one JSON value, which ends where its closing brace
//! ends whatever the header said; a length that disagrees is reported, never trusted with memory.
//!
//! Past the declared length the JSON reader only gets bytes that arrive at once (the rest of a
//! body whose length was counted short is written with it), and never the next header: a body
//! that is not complete JSON is then reported and skipped, instead of waiting for a client that
//! is itself waiting for an answer.

use std::io::{BufRead, BufReader, Read};

use lsp_server::Message;

use crate::source::MAX_FILE_BYTES;

/// The largest body read: the largest document linted, with room for JSON's escapes.
pub const MAX_MESSAGE_BYTES: u64 = 4 * MAX_FILE_BYTES;

/// Header lines longer than this are not headers.
const MAX_HEADER_LINE: usize = 4096;

/// What reading the next message gave.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A message was read but not used; what to tell the client. The stream is in step again.
    Skipped(String),
    /// A message was read and used, but its framing was wrong; what to tell the client.
    Warned(Message, String),
    /// The stream ended.
    End,
    /// The stream cannot be followed any further; why.
    Fatal(String),
}

/// Read the next message. `more` waits a moment for input and says whether any arrived: how the
/// reader tells a body's continuation, which the client sent along with it, from a client that
/// is waiting for an answer.
pub fn read<R: Read>(
    input: &mut BufReader<R>,
    more: &mut dyn FnMut() -> bool,
) -> std::io::Result<Incoming> {
    let mut declared: Option<Result<u64, String>> = None;
    let mut skipped = 0usize;
    let mut line = Vec::new();
    // Header lines up to the empty line that ends them.
    loop {
        line.clear();
        let n = (&mut *input)
            .take(MAX_HEADER_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Incoming::End);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() && declared.is_some() {
            break;
        }
        if text.is_empty() {
            continue;
        }
        // Out of step (the rest of a broken body, or noise): look for the next length header
        // even in the middle of a line.
        let lower = text.to_ascii_lowercase();
        let Some(at) = lower.find("content-length:") else {
            if declared.is_none() {
                skipped += n;
            }
            // Other headers (Content-Type) are allowed once a length was seen.
            continue;
        };
        skipped += at;
        let value = text[at + "content-length:".len()..].trim();
        declared = Some(
            value
                .parse::<u64>()
                .map_err(|_| format!("Content-Length {value:?} is not a number of bytes")),
        );
    }
    if let Some(Ok(n)) = declared {
        if n > MAX_MESSAGE_BYTES {
            return Ok(Incoming::Fatal(format!(
                "a message declares {n} bytes, more than the {MAX_MESSAGE_BYTES} this server reads"
            )));
        }
    }
    let mut body = Body {
        input: &mut *input,
        declared: match declared {
            Some(Ok(n)) => n,
            _ => 0,
        },
        read: 0,
        more,
        stopped: false,
    };
    let value = {
        let mut de = serde_json::Deserializer::from_reader(&mut body);
        serde::Deserialize::deserialize(&mut de)
    };
    let value: serde_json::Value = match value {
        Ok(v) => v,
        Err(_) if body.read >= MAX_MESSAGE_BYTES => {
            return Ok(Incoming::Fatal(format!(
                "a message is longer than the {MAX_MESSAGE_BYTES} bytes this server reads"
            )));
        }
        Err(e) if e.is_eof() && !body.stopped => return Ok(Incoming::End),
        Err(e) if e.is_io() => return Err(std::io::Error::other(e)),
        Err(e) => {
            return Ok(Incoming::Skipped(format!(
                "ignored a message whose body is not complete JSON: {e}"
            )))
        }
    };
    let read = body.read;
    let mut problems = Vec::new();
    if skipped > 0 {
        problems.push(format!(
            "skipped {skipped} bytes that were not part of a message"
        ));
    }
    match declared {
        Some(Ok(n)) if n != read => problems.push(format!(
            "Content-Length said {n} bytes but the message has {read}; lengths count bytes of UTF-8, not characters"
        )),
        Some(Err(e)) => problems.push(e),
        _ => {}
    }
    let msg = match serde_json::from_value::<Message>(value) {
        Ok(m) => m,
        Err(e) => {
            problems.push(format!("ignored a message that is not JSON-RPC: {e}"));
            return Ok(Incoming::Skipped(problems.join("; ")));
        }
    };
    Ok(if problems.is_empty() {
        Incoming::Message(msg)
    } else {
        Incoming::Warned(msg, problems.join("; "))
    })
}

/// The body as the JSON reader sees it: the declared bytes, waited for as usual; past them, only
/// bytes that arrive at once and are not the start of the next message's header.
struct Body<'a, R> {
    input: &'a mut BufReader<R>,
    declared: u64,
    /// Bytes given to the JSON reader so far.
    read: u64,
    more: &'a mut dyn FnMut() -> bool,
    /// Whether the body was cut short of the stream's end.
    stopped: bool,
}

impl<R: Read> Read for Body<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read >= MAX_MESSAGE_BYTES {
            return Ok(0);
        }
        let room = (MAX_MESSAGE_BYTES - self.read) as usize;
        let want = if self.read < self.declared {
            ((self.declared - self.read) as usize).min(buf.len())
        } else {
            if self.input.buffer().is_empty() && !(self.more)() {
                self.stopped = true;
                return Ok(0);
            }
            let ahead = self.input.fill_buf()?;
            if starts_header(ahead) {
                self.stopped = true;
                return Ok(0);
            }
            // One byte at a time, so that a header right behind it is seen before it is read.
            1
        };
        let n = self.input.read(&mut buf[..want.min(room)])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Whether `ahead` starts (or, being short, may start) a `Content-Length` header line.
fn starts_header(ahead: &[u8]) -> bool {
    const HEADER: &[u8] = b"content-length";
    let ahead = ahead.strip_prefix(b"\r\n").unwrap_or(ahead);
    let n = ahead.len().min(HEADER.len());
    n > 0 && ahead[..n].eq_ignore_ascii_case(&HEADER[..n])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(header: &str, body: &str) -> Vec<u8> {
        format!("{header}\r\n\r\n{body}").into_bytes()
    }

    const PING: &str = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
    const OPEN: &str =
        r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"x":"größe"}}"#;

    /// Every message in `bytes`, read as a client that sent them all at once would have them.
    fn read_all(bytes: &[u8]) -> Vec<String> {
        let mut input = BufReader::new(bytes);
        let mut seen = Vec::new();
        loop {
            match read(&mut input, &mut || true).unwrap() {
                Incoming::Message(Message::Notification(n)) => seen.push(n.method),
                Incoming::Warned(Message::Notification(n), why) => {
                    seen.push(format!("{} ({why})", n.method))
                }
                Incoming::Skipped(why) => seen.push(format!("skipped ({why})")),
                Incoming::End => return seen,
                Incoming::Fatal(why) => {
                    seen.push(format!("fatal ({why})"));
                    return seen;
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_wrong_length_is_reported_and_the_next_message_still_read() {
        let chars = OPEN.chars().count();
        for header in [
            format!("Content-Length: {chars}"),
            format!("Content-Length: {}", OPEN.len() + 40),
            "Content-Length: many".to_string(),
        ] {
            let mut bytes = frame(&header, OPEN);
            bytes.extend(frame(&format!("Content-Length: {}", PING.len()), PING));
            let seen = read_all(&bytes);
            assert_eq!(seen.len(), 2, "{header}: {seen:?}");
            assert!(seen[0].starts_with("textDocument/didOpen ("), "{seen:?}");
            assert_eq!(seen[1], "initialized", "{header}");
        }
    }

    #[test]
    fn line_feeds_alone_end_headers_too() {
        let bytes = format!("Content-Length: {}\n\n{PING}", PING.len());
        assert_eq!(read_all(bytes.as_bytes()), ["initialized"]);
    }

    #[test]
    fn a_body_that_is_not_json_is_skipped_up_to_the_next_header() {
        let mut bytes = frame("Content-Length: 11", "hello world");
        bytes.extend(frame(&format!("Content-Length: {}", PING.len()), PING));
        let seen = read_all(&bytes);
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].starts_with("skipped (ignored a message whose body is not complete JSON"));
        assert!(seen[1].starts_with("initialized ("), "{seen:?}");
        assert!(seen[1].contains("skipped"), "{seen:?}");
    }

    #[test]
    fn a_huge_length_ends_the_server_without_allocating_it() {
        for n in [
            "9223372036854775808",
            "4000000000",
            "99999999999999999999999",
        ] {
            let seen = read_all(&frame(&format!("Content-Length: {n}"), PING));
            // The last does not fit in 64 bits: not a number, so the body is read as JSON.
            if n.parse::<u64>().is_ok() {
                assert_eq!(seen.len(), 1);
                assert!(seen[0].starts_with("fatal (a message declares"), "{seen:?}");
            } else {
                assert!(seen[0].starts_with("initialized ("), "{seen:?}");
            }
        }
    }

    /// A body cut short with the right length, from a client that then waits for an answer: the
    /// reader does not wait with it.
    #[test]
    fn an_incomplete_body_is_skipped_without_waiting_for_more() {
        let body = r#"{"jsonrpc":"2.0","id":9,"method":"#;
        let mut bytes = frame(&format!("Content-Length: {}", body.len()), body);
        let first = bytes.len();
        bytes.extend(frame(&format!("Content-Length: {}", PING.len()), PING));
        // The buffer holds exactly the first frame, and nothing more arrives meanwhile.
        let mut input = BufReader::with_capacity(first, &bytes[..]);
        let got = read(&mut input, &mut || false).unwrap();
        assert!(
            matches!(&got, Incoming::Skipped(why) if why.contains("not complete JSON")),
            "{got:?}"
        );
        // The next header is right behind it: the same result whether or not more arrives.
        let seen = read_all(&bytes);
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].starts_with("skipped"), "{seen:?}");
        assert_eq!(seen[1], "initialized");
    }

    #[test]
    fn a_stream_cut_in_a_message_ends() {
        let bytes = frame("Content-Length: 50", r#"{"jsonrpc":"2.0","me"#);
        assert!(read_all(&bytes).is_empty());
        assert!(read_all(b"Content-Length: 5\r\n").is_empty());
    }
}
