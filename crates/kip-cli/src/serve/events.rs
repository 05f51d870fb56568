//! `GET /api/events`: change notifications as server-sent events, fed by
//! the change log's sequence number the host's chores publish.

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use kip_api::{Api, ChangesRequest};

use crate::runtime::blocking;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;

use super::AppState;

#[derive(Deserialize)]
pub(super) struct EventsQuery {
    since: Option<u64>,
}

/// `GET /api/events`: change notifications as server-sent events.
pub(super) async fn events(
    State(state): State<AppState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    // A reconnecting EventSource sends the id of the last event it got.
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let current = *state.seq.borrow();
    let since = resume.or(query.since).unwrap_or(current);
    let stream = futures_util::stream::unfold(
        Feed {
            api: state.api,
            seq: state.seq,
            since,
            pending: std::collections::VecDeque::from([ready_event(since, current)]),
        },
        Feed::next,
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn ready_event(since: u64, last_seq: u64) -> Event {
    Event::default()
        .event("ready")
        .data(json!({"since": since, "last_seq": last_seq}).to_string())
}

/// The state of one event stream.
struct Feed {
    api: Api,
    seq: watch::Receiver<u64>,
    since: u64,
    pending: std::collections::VecDeque<Event>,
}

impl Feed {
    async fn next(mut self) -> Option<(Result<Event, std::convert::Infallible>, Feed)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            // Catch up on what is already logged before waiting: the first
            // time through this also delivers what happened before the
            // client connected, from `since` on.
            if *self.seq.borrow_and_update() > self.since {
                self.fetch().await;
                if !self.pending.is_empty() {
                    continue;
                }
            }
            // The poller closed: the server is shutting down.
            self.seq.changed().await.ok()?;
        }
    }

    async fn fetch(&mut self) {
        let since = self.since;
        let request = ChangesRequest { since, limit: None };
        match blocking(self.api.clone(), move |api| api.changes(&request)).await {
            Ok(r) if r.reset => {
                self.since = r.last_seq;
                self.pending.push_back(
                    Event::default()
                        .event("reset")
                        .id(r.last_seq.to_string())
                        .data(json!({"last_seq": r.last_seq}).to_string()),
                );
            }
            Ok(r) => {
                for change in r.changes {
                    self.since = change.seq;
                    let data = serde_json::to_string(&change).unwrap_or_default();
                    self.pending.push_back(
                        Event::default()
                            .event("change")
                            .id(change.seq.to_string())
                            .data(data),
                    );
                }
            }
            Err(e) => tracing::warn!("reading the change log failed: {e}"),
        }
    }
}
