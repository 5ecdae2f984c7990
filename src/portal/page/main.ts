import { showAuditLog } from './audit-view.js';
import { byId, el, timeElement } from './dom.js';
import { showEndpoints } from './endpoints-view.js';
import { report } from './notices.js';
import { openSession } from './session.js';

/** The webhook portal's page: opens the session, then shows the owner's endpoints and their changes. */
async function start(): Promise<void> {
  const session = await openSession();
  const who = byId('who', HTMLParagraphElement);
  who.replaceChildren(
    'Endpoints of ',
    el('strong', { text: session.owner }),
    '; this session ends at ',
    timeElement(session.expiresAt),
    '.',
  );
  who.hidden = false;
  byId('opening', HTMLParagraphElement).hidden = true;
  byId('portal', HTMLDivElement).hidden = false;
  await showEndpoints();
  await showAuditLog();
}

start().catch(report);
