import { readFileSync } from 'node:fs';

/** One known-answer case of vectors.json (schema documented in the README). */
export interface Vector {
  name: string;
  secret: string;
  timestamp: number;
  payload: string;
  header: string | null;
  now: number;
  toleranceSeconds?: number;
  expect: 'ok' | 'missing_header' | 'malformed_header' | 'timestamp_out_of_range' | 'signature_mismatch' | 'payload_not_raw';
}

export const vectors: Vector[] = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8'));

export const KAT = {
  secret: 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8',
  timestamp: 1700000000,
  payload: '{"id":"evt_1","type":"ping"}',
  v1: '774b41eb8b7b7e0f177e807aef097854fbdca8662ca80d877a6ee6f1556b5ba7',
} as const;

export const SECRET = 'whsec_CzBVep_E6Q4zWH2ix-wRNluApcrvFDleg6jN8hc8YYY';
export const NOW = 1731000000;

/** A delivery body as the service would send it. */
export function deliveryBody(id = 'dlv_1', type = 'member.joined'): string {
  return JSON.stringify({ id, type, created: NOW - 10, data: { userId: 'usr_42', handle: 'runners' } });
}

/** Calls fn and returns the error code it throws (or 'ok'). */
export async function outcome(fn: () => unknown): Promise<string> {
  try {
    await fn();
    return 'ok';
  } catch (err) {
    return (err as { code?: string }).code ?? `threw ${String(err)}`;
  }
}
