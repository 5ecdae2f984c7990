import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

/** A span as an OTLP/HTTP receiver reads it (JSON encoding: ids in hex, attributes flattened here). */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  /** 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly service: unknown;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  /** The bodies of OTLP/HTTP protobuf trace exports, as sent: read here only for the bytes they hold. */
  readonly protobuf: readonly Buffer[];
  /** Requests that were not OTLP/HTTP trace exports. */
  readonly refused: readonly string[];
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
const plain = (value: AnyValue) =>
  value.stringValue ??
  (value.intValue === undefined ? undefined : Number(value.intValue)) ??
  value.boolValue ??
  value.doubleValue;
const attributesOf = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));

/**
 * A stub OpenTelemetry collector: the OTLP/HTTP receiver's one route (`POST /v1/traces`), keeping every span
 * of a JSON export, and a protobuf export's body as it came. Closed after the test.
 */
export async function startOtlpReceiver(t: TestContext): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const protobuf: Buffer[] = [];
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = request.headers['content-type'];
      const traces = request.method === 'POST' && request.url === '/v1/traces';
      if (traces && type === 'application/x-protobuf') {
        protobuf.push(Buffer.concat(chunks));
        // An empty ExportTraceServiceResponse: all accepted.
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        return;
      }
      if (!traces || type !== 'application/json') {
        refused.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
        response.writeHead(415).end();
        return;
      }
      const exported = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: KeyValue[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, 'attributes' | 'status' | 'service'> & {
              attributes?: KeyValue[];
              status?: { code?: number };
            })[];
          }[];
        }[];
      };
      for (const { resource, scopeSpans } of exported.resourceSpans) {
        const service = attributesOf(resource.attributes)['service.name'];
        for (const scope of scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              status: span.status?.code ?? 0,
              attributes: attributesOf(span.attributes),
              service,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, protobuf, refused };
}
