import type { StoreName } from './options.js';
import type { Measured } from './report.js';
import type { Scenario } from './scenarios.js';
import { STALL_MS, type WebhookFigures } from './webhook-subscription.js';

/**
 * What a reader of the report must not miss about the deliveries of scenario `label`. Up to `connections`
 * more deliveries than logged creates are expected: the requests cut off when the load stopped.
 */
function webhookProblems(label: string, figures: WebhookFigures, connections: number): string[] {
  const problems: string[] = [];
  const { deliveries, created } = figures;
  if (!figures.drained) {
    problems.push(
      `${label}: webhook deliveries still pending, none arrived for ${STALL_MS / 1000} s ` +
        `(${deliveries} delivered, ${created} creates answered 2xx)`,
    );
  } else if (deliveries < created || deliveries > created + connections) {
    problems.push(`${label}: ${deliveries} webhook deliveries for ${created} creates answered 2xx`);
  }
  if (figures.distinctIds !== deliveries) {
    problems.push(
      `${label}: ${deliveries} webhook deliveries but ${figures.distinctIds} distinct webhook-ids (sent twice)`,
    );
  }
  return problems;
}

/** What a reader of the report must not miss about one scenario's run on `store`. */
export function scenarioProblems(
  store: StoreName,
  scenario: Scenario,
  measured: Measured,
  connections: number,
): string[] {
  const problems: string[] = [];
  const { errorResponses, socketErrors, timeouts } = measured.load;
  if (errorResponses + socketErrors + timeouts > 0) {
    problems.push(
      `${store} ${scenario.name}${scenario.readOnly ? ' (read-only)' : ''}: ${errorResponses} responses ≥ 400 ` +
        `${JSON.stringify(measured.errorStatuses)}, ${socketErrors} socket errors, ${timeouts} timeouts`,
    );
  }
  const logged = measured.requestsLogged ?? 0;
  const dropped = measured.logLinesDropped ?? 0;
  if (logged < measured.load.requests || dropped > 0) {
    problems.push(
      `${store} ${scenario.name}: ${logged} request log lines for ${measured.load.requests} responses, ` +
        `${dropped} lines dropped by the service (its log fell behind)`,
    );
  }
  if (measured.webhooks !== undefined) {
    problems.push(...webhookProblems(`${store} ${scenario.name}`, measured.webhooks, connections));
  }
  return problems;
}
