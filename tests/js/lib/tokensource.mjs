// A token source for tests of token refresh: it counts the refreshes a
// client makes, so a test awaits the one it needs instead of sleeping.
import { EventEmitter } from 'node:events';

import jwt from 'jsonwebtoken';

import { EventLog } from './events.mjs';

/**
 * TokenSource hands out tokens made by mint (its get is a client's
 * getToken) and logs each call, so a test can await the n-th refresh and
 * know when the first token expires. closeDelaySeconds is the server's
 * delay before it closes an expired connection or subscription; waitMs
 * bounds the wait for each call.
 */
export class TokenSource extends EventEmitter {
  constructor(mint, { closeDelaySeconds, waitMs }) {
    super();
    this.mint = mint;
    this.closeDelaySeconds = closeDelaySeconds;
    this.waitMs = waitMs;
    this.calls = new EventLog(this, 'call');
    this.firstExpiryMs = null;
  }

  get = async () => {
    const token = this.mint();
    this.firstExpiryMs ??= jwt.decode(token).exp * 1000;
    this.emit('call', Date.now());
    return token;
  };

  /**
   * pastFirstExpiry resolves with n at the n-th call, the first made after
   * the first token's expiry, plus the server's close delay, plus a second
   * for the server's whole-second expiry checks: by then a server that
   * ignored the refresh would have closed.
   */
  async pastFirstExpiry() {
    const deadline = this.firstExpiryMs + (this.closeDelaySeconds + 1) * 1000;
    for (let n = 1; ; n++) {
      const calls = await this.calls.count(n, this.waitMs);
      if (calls[n - 1] > deadline) return n;
    }
  }
}
