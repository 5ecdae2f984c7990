import { currentSession, startSession } from './api.js';
import type { Session } from './api-types.js';

/**
 * The portal's session. A link carries its token in the fragment, which browsers never send: it leaves the
 * address bar (and so the history, bookmarks and any later Referer) before anything is asked, and goes to
 * the service once, in a POST body, for the session cookie. Without a token the cookie may still hold one.
 */
export async function openSession(): Promise<Session> {
  const token = location.hash.slice(1);
  if (token === '') return currentSession();
  history.replaceState(null, '', location.pathname);
  return startSession(token);
}
