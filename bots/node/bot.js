#!/usr/bin/env node
// A speeltafel bot in Node.js. It knows only the .proto files (loaded at run time from
// ../../proto) and docs/protocol.md: no generated code, no speeltafel SDK.
//
//   node bot.js --server 127.0.0.1:50051 --match ID [--seat N] [--name NAME]
//   node bot.js --server 127.0.0.1:50051 --match ID --token TOKEN   (an existing seat)
//   node bot.js --server 127.0.0.1:50051 --bot-token T [--games g1,g2] [--concurrency N]
//                                       (lobby mode: seated by a tournament director)
//
// Options: --seed S (choose a random legal action, seeded; default: the first legal action),
// --drop-after K (cancel its own stream once after K views, to show the resume),
// --resend (send one acknowledged action again with its request id: answered duplicate),
// --verbose (log to stderr). At the end it prints one JSON line on stdout:
//   {"seat", "final_version", "outcome", "actions", "duplicates", "reconnects", ...}
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.join(__dirname, '..', '..', 'proto');
const MAX_RECONNECTS = 20;
const UNARY_DEADLINE_MS = 10_000;

// ------------------------------------------------------------------ command line

function parseArgs(argv) {
  const opts = {
    seat: null, name: '', token: '', dropAfter: 0, resend: false, seed: null,
    botToken: '', games: null, concurrency: 1, maxMatches: 0,
  };
  const flags = new Set(['--resend', '--verbose']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (flags.has(arg)) {
      opts[arg === '--resend' ? 'resend' : 'verbose'] = true;
      continue;
    }
    const value = argv[++i];
    if (value === undefined) usage(`${arg} needs a value`);
    switch (arg) {
      case '--server': opts.server = value; break;
      case '--match': opts.match = value; break;
      case '--seat': opts.seat = Number.parseInt(value, 10); break;
      case '--name': opts.name = value; break;
      case '--token': opts.token = value; break;
      case '--drop-after': opts.dropAfter = Number.parseInt(value, 10); break;
      case '--seed': opts.seed = Number.parseInt(value, 10); break;
      case '--bot-token': opts.botToken = value; break;
      case '--games': opts.games = value.split(',').filter(Boolean); break;
      case '--concurrency': opts.concurrency = Number.parseInt(value, 10); break;
      case '--max-matches': opts.maxMatches = Number.parseInt(value, 10); break;
      default: usage(`unknown option ${arg}`);
    }
  }
  if (!opts.botToken) opts.botToken = process.env.SPEELTAFEL_BOT_TOKEN ?? '';
  if (!opts.server) usage('--server is required');
  if (!opts.match && !opts.botToken) usage('--match (one seat) or --bot-token (the lobby) is required');
  if (!(opts.concurrency >= 1)) usage('--concurrency must be at least 1');
  return opts;
}

function usage(problem) {
  process.stderr.write(
    `${problem}\nusage: node bot.js --server HOST:PORT --match ID [--seat N] [--name NAME]` +
      ' [--token TOKEN] [--seed S] [--drop-after K] [--resend] [--verbose]\n' +
      '       node bot.js --server HOST:PORT --bot-token T [--games G1,G2] [--concurrency N]' +
      ' [--seed S] [--max-matches K] [--verbose]\n',
  );
  process.exit(2);
}

// ------------------------------------------------------------------ the contract

// The loader settings every dynamic client needs (docs/protocol.md, "Loading the protos"):
// proto field names, 64-bit integers as strings, zero values present (seat 0!), the name of
// the set field of each oneof, enum names.
const definition = protoLoader.loadSync(['speeltafel/v1/match_service.proto', 'speeltafel/v1/tournament.proto'], {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
});
const v1 = grpc.loadPackageDefinition(definition).speeltafel.v1;

// ------------------------------------------------------------------ rich errors

// google.rpc.Status in the `grpc-status-details-bin` trailer, decoded by hand: it is three
// small messages (googleapis google/rpc/status.proto and error_details.proto), so a
// twenty-line protobuf reader is all it takes.
function protoFields(buf) {
  const fields = [];
  let i = 0;
  const varint = () => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[i++];
      value |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
      if (!(byte & 0x80)) return value;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const [field, wire] = [key >> 3, key & 7];
    if (wire === 0) fields.push([field, varint()]);
    else if (wire === 2) {
      const length = Number(varint());
      fields.push([field, buf.subarray(i, i + length)]);
      i += length;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return fields;
}

// {code, message, reason, domain, metadata, retryDelayMs} of a failed call (reason "" and
// retryDelayMs null when the server sent no such detail, e.g. a transport error).
function richError(err) {
  const out = { code: err.code, message: err.details, reason: '', domain: '', metadata: {}, retryDelayMs: null };
  const [raw] = err.metadata ? err.metadata.get('grpc-status-details-bin') : [];
  if (!raw) return out;
  for (const [field, any] of protoFields(raw)) {
    if (field !== 3) continue; // Status.details: repeated google.protobuf.Any
    let typeUrl = '';
    let value = Buffer.alloc(0);
    for (const [f, v] of protoFields(any)) {
      if (f === 1) typeUrl = v.toString();
      if (f === 2) value = v;
    }
    if (typeUrl.endsWith('/google.rpc.ErrorInfo')) {
      for (const [f, v] of protoFields(value)) {
        if (f === 1) out.reason = v.toString();
        if (f === 2) out.domain = v.toString();
        if (f === 3) {
          const entry = Object.fromEntries(protoFields(v).map(([k, s]) => [k, s.toString()]));
          out.metadata[entry[1] ?? ''] = entry[2] ?? '';
        }
      }
    } else if (typeUrl.endsWith('/google.rpc.RetryInfo')) {
      for (const [f, duration] of protoFields(value)) {
        if (f !== 1) continue;
        let ms = 0;
        for (const [g, n] of protoFields(duration)) ms += g === 1 ? Number(n) * 1000 : Number(n) / 1e6;
        out.retryDelayMs = ms;
      }
    }
  }
  return out;
}

// ------------------------------------------------------------------ helpers

const S = grpc.status;
// Statuses after which a stream (or a call) is tried again; the rest are final.
const RETRYABLE = new Set([
  S.UNAVAILABLE, S.DEADLINE_EXCEEDED, S.CANCELLED, S.INTERNAL, S.UNKNOWN, S.RESOURCE_EXHAUSTED,
]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const backoffMs = (failures) => Math.min(2000, 50 * 2 ** failures) * (0.5 + Math.random());

function seatMetadata(token, matchId) {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  md.set('x-match-id', matchId);
  return md;
}

function unary(client, method, request, metadata = new grpc.Metadata()) {
  const deadline = Date.now() + UNARY_DEADLINE_MS;
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline }, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// A unary call retried with the same request (so the same request_id) while the status
// says the request may not have arrived or the server asks to come back later.
async function retrying(client, method, request, metadata) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await unary(client, method, request, metadata);
    } catch (err) {
      const rich = richError(err);
      const again = [S.UNAVAILABLE, S.DEADLINE_EXCEEDED, S.RESOURCE_EXHAUSTED].includes(err.code);
      if (!again || attempt >= MAX_RECONNECTS) throw err;
      await sleep(rich.retryDelayMs ?? backoffMs(attempt));
    }
  }
}

// A small seeded generator (mulberry32), so a seeded bot plays the same way every time.
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------ the bot

class Bot {
  constructor(opts) {
    this.opts = opts;
    this.client = new v1.MatchService(opts.server, grpc.credentials.createInsecure());
    this.random = opts.seed === null ? null : seeded(opts.seed);
    this.matchId = opts.match;
    this.seat = null; // from JoinMatch, or from the first view when playing with --token
    this.token = opts.token;
    this.lastVersion = 0; // the last version seen: since_version of the next subscribe
    this.minVersion = 0; // act only on views at or after this version (see act())
    this.latest = null; // the newest view
    this.final = null; // the FINISHED view
    this.pending = null; // the one SubmitActionRequest in flight
    this.probe = false; // the pending request is the --resend of an acknowledged action
    this.acked = []; // {seq, request_id} of every accepted action, once each
    this.ackedIds = new Set();
    this.views = 0;
    this.dropped = false;
    this.stats = { actions: 0, duplicates: 0, reconnects: 0, resyncs: 0, rejected: 0 };
    this.resendRequest = null; // --resend: the acknowledged request to send once more
    this.resendDuplicate = null; // the answer to --resend: true when it came back duplicate
  }

  log(...parts) {
    if (this.opts.verbose) process.stderr.write(`[node bot ${this.seat ?? '?'}] ${parts.join(' ')}\n`);
  }

  // Take a seat. The request id makes a retried JoinMatch return the same seat and token
  // instead of taking a second seat; it recovers the token, so it is random and secret.
  async join() {
    const request = { match_id: this.matchId, name: this.opts.name, request_id: crypto.randomUUID() };
    if (this.opts.seat !== null) request.seat = this.opts.seat; // optional: set even when 0
    const joined = await retrying(this.client, 'JoinMatch', request);
    this.seat = joined.seat;
    this.token = joined.token;
    this.log('joined', this.matchId, 'seat', joined.seat);
  }

  async run() {
    if (!this.token) await this.join();
    const metadata = seatMetadata(this.token, this.matchId);
    let failures = 0;
    for (;;) {
      const outcome = await this.stream(metadata);
      if (outcome.done) break;
      if (outcome.progressed) failures = 0; // a stream that delivered views was healthy
      const err = outcome.error;
      if (err && !outcome.ownCancel) {
        const rich = richError(err);
        this.log('stream ended:', err.code, rich.reason, err.details);
        if (!RETRYABLE.has(err.code)) {
          throw Object.assign(new Error(`Play failed: ${S[err.code]} ${rich.reason} ${err.details}`), { rich });
        }
        failures += 1;
        if (failures > MAX_RECONNECTS) throw err;
        await sleep(rich.retryDelayMs ?? backoffMs(failures));
      } else if (!err) {
        failures += 1; // ended without the final view: the server is going away
        if (failures > MAX_RECONNECTS) throw new Error('Play keeps ending before the match is over');
        await sleep(backoffMs(failures));
      }
      this.stats.reconnects += 1;
      this.log('reconnecting since version', this.lastVersion);
    }
    if (this.pending !== null && !this.probe) await this.settle();
    const problems = await this.verify();
    if (problems === null) return { ...this.report(), verified: null, problems: [], sealed: true };
    return { ...this.report(), verified: problems.length === 0, problems };
  }

  // After the end: the record reveals the seed. Check it against the commitment every view
  // carried, and find each of our acknowledged actions at its seq. (A full replay of the
  // deal needs the game's rules: speeltafel.server.engine.verify does that in Python.)
  async verify() {
    let record = null;
    for (let attempt = 1; record === null; attempt++) {
      try {
        record = (await retrying(this.client, 'GetMatchRecord', { match_id: this.matchId })).record;
      } catch (err) {
        // not_finished: the server is still storing the end; record_sealed: a duplicate
        // set's match, whose record is given out once every match of the set has ended
        // (null: not checked yet); anything else: no record.
        const reason = richError(err).reason;
        if (reason === 'record_sealed') return null;
        if (reason !== 'not_finished' || attempt >= 10) return [`no record: ${err.details}`];
        await sleep(100 * attempt);
      }
    }
    const problems = [];
    const seed = crypto.createHash('sha256').update(record.server_seed).digest('hex');
    if (seed !== record.commitment || seed !== this.final.commitment) {
      problems.push('the revealed seed does not match the published commitment');
    }
    const bySeq = new Map(record.actions.map((a) => [Number(a.seq), a]));
    for (const { seq } of this.acked) {
      const recorded = bySeq.get(seq);
      if (!recorded || recorded.seat !== this.seat) problems.push(`our action ${seq} is not in the record`);
    }
    const ours = record.actions.filter((a) => a.seat === this.seat && !a.clock_default).length;
    if (ours !== this.acked.length) problems.push(`the record holds ${ours} of our actions, we had ${this.acked.length} acknowledged`);
    return problems;
  }

  // One Play stream: subscribe from the last version seen, re-send the action in flight
  // with its request id, then act on views until the final one. Resolves with
  // {done: true} at the end of the match, or {error, ownCancel} when the stream is lost.
  stream(metadata) {
    return new Promise((resolve) => {
      const call = this.client.Play(metadata);
      let status = null;
      let ended = false;
      let ownCancel = false;
      let settled = false;
      let progressed = false;
      const finish = () => {
        if (settled || status === null || (!ended && status.code === S.OK)) return;
        settled = true;
        if (status.code === S.OK) resolve({ done: this.final !== null, progressed });
        else resolve({ done: false, error: status.error, ownCancel, progressed });
      };
      const send = (request) => {
        if (!call.writableEnded && status === null) call.write(request);
      };
      call.on('data', (response) => {
        if (response.event !== 'subscribed') progressed = true;
        try {
          this.onResponse(response, call, send);
        } catch (e) {
          process.stderr.write(`bot error: ${e.stack}\n`);
          process.exit(1);
        }
        // --drop-after K: from the K-th view on, drop the stream just after sending an
        // action (so it is in flight and must be re-sent), or 10 views later regardless.
        const k = this.opts.dropAfter;
        const inFlight = this.pending !== null && !this.probe;
        if (k && !this.dropped && this.final === null && this.views >= k && (inFlight || this.views >= k + 10)) {
          this.dropped = true;
          ownCancel = true;
          this.log('dropping the stream on purpose after', this.views, 'views; in flight:', inFlight);
          call.cancel();
        }
      });
      call.on('error', (err) => {
        status = { code: err.code, error: err };
        setImmediate(finish);
      });
      call.on('status', (s) => {
        if (status === null) status = { code: s.code, error: null };
        finish();
      });
      call.on('end', () => {
        ended = true;
        finish();
      });
      send({ subscribe: { match_id: this.matchId, since_version: String(this.lastVersion) } });
      if (this.pending !== null) {
        this.log('re-sends the action in flight', this.pending.request_id);
        send({ submit: this.pending });
      }
    });
  }

  onResponse(response, call, send) {
    switch (response.event) {
      case 'subscribed': {
        const sub = response.subscribed;
        this.log('subscribed at version', sub.version, sub.status);
        // Resubscribed after the end with since_version = the final version: nothing follows.
        // If the last view we saw is not the final one (a match ended early keeps its
        // version), ask for a fresh snapshot: subscribe again from 0.
        if (sub.status === 'MATCH_STATUS_FINISHED' && Number(sub.version) === this.lastVersion) {
          if (this.latest && this.latest.status === 'MATCH_STATUS_FINISHED') this.final = this.latest;
          else this.lastVersion = 0;
          call.end();
          return;
        }
        break;
      }
      case 'view': {
        const view = response.view;
        const version = Number(view.version); // uint64 as a string: versions fit in 2^53
        if (response.resync) this.stats.resyncs += 1;
        // Never move backwards. The same version may come again (a match ended early by
        // the server, or clocks extended after a restart): the newer view replaces it.
        if (version < this.lastVersion && !response.resync) return;
        this.views += 1;
        this.lastVersion = version;
        this.latest = view;
        if (this.seat === null && view._seat === 'seat') this.seat = view.seat;
        if (view.status === 'MATCH_STATUS_FINISHED') {
          this.final = view;
          call.end(); // half-close: the server still sends the answer to what is in flight
          return;
        }
        break;
      }
      case 'result': {
        const result = response.result;
        if (this.pending === null || result.request_id !== this.pending.request_id) return;
        this.onResult(result);
        if (this.final !== null) return;
        break;
      }
      default:
        return;
    }
    this.act(send);
  }

  onResult(result) {
    const request = this.pending;
    const probe = this.probe;
    this.pending = null;
    this.probe = false;
    if (result.result === 'accepted') {
      const ack = result.accepted;
      if (ack.duplicate) this.stats.duplicates += 1;
      if (probe) {
        this.resendDuplicate = ack.duplicate;
        this.log('re-sent', request.request_id, 'answered duplicate =', ack.duplicate);
        return;
      }
      if (!this.ackedIds.has(request.request_id)) {
        this.ackedIds.add(request.request_id);
        this.acked.push({ seq: Number(ack.seq), request_id: request.request_id });
        this.stats.actions += 1;
      }
      // Our next decision starts at the version this action produced.
      this.minVersion = Math.max(this.minVersion, Number(ack.version));
      if (this.opts.resend && this.resendDuplicate === null && this.resendRequest === null) {
        this.resendRequest = request; // sent again by act(): same request id, same action
      }
      return;
    }
    const error = result.error;
    this.stats.rejected += 1;
    this.log('refused', request.request_id, S[error.code], error.rule, JSON.stringify(error.metadata));
    // ABORTED (stale_version): choose again from a view newer than the one that failed;
    // error.metadata.version is the match's version now. Other refusals: the same.
    this.minVersion = Math.max(this.minVersion, Number(request.expected_version) + 1);
  }

  // Send the re-send probe, or choose and send one action when the newest view asks this
  // seat to act. Never more than one request in flight.
  act(send) {
    if (this.pending !== null || this.final !== null) return;
    if (this.resendRequest !== null && this.resendDuplicate === null) {
      this.pending = this.resendRequest;
      this.probe = true;
      this.resendRequest = null;
      this.log('re-sends', this.pending.request_id);
      send({ submit: this.pending });
      return;
    }
    const view = this.latest;
    if (view === null) return;
    if (view.status !== 'MATCH_STATUS_RUNNING' || Number(view.version) < this.minVersion) return;
    if (!view.to_act.includes(this.seat) || view.legal_actions.length === 0) return;
    const legal = view.legal_actions;
    const action = this.random ? legal[Math.floor(this.random() * legal.length)] : legal[0];
    this.pending = {
      match_id: this.matchId,
      expected_version: view.version,
      request_id: crypto.randomUUID(),
      action, // a legal action is sent back unchanged
    };
    this.log('v' + view.version, 'submits', JSON.stringify(action[action.game]));
    send({ submit: this.pending });
  }

  // The stream ended after the final view but before the answer to our last action: ask
  // for it with the same request id (the stored answer, or game_over if it never applied).
  async settle() {
    const metadata = seatMetadata(this.token, this.matchId);
    try {
      const ack = await retrying(this.client, 'SubmitAction', this.pending, metadata);
      if (ack.duplicate) this.stats.duplicates += 1;
      this.acked.push({ seq: Number(ack.seq), request_id: this.pending.request_id });
      this.stats.actions += 1;
    } catch (err) {
      this.log('last action not applied:', richError(err).reason);
    }
    this.pending = null;
  }

  report() {
    const view = this.final;
    const o = view.outcome;
    return {
      seat: this.seat,
      match_id: this.matchId,
      final_version: Number(view.version),
      outcome: {
        scores: o.scores.map(Number),
        ranks: o.ranks,
        utilities: o.utilities,
        termination: o.termination,
      },
      actions: this.stats.actions,
      duplicates: this.stats.duplicates,
      reconnects: this.stats.reconnects,
      resyncs: this.stats.resyncs,
      rejected: this.stats.rejected,
      resend_duplicate: this.resendDuplicate,
      acked: this.acked,
    };
  }
}

// ------------------------------------------------------------------ the lobby

// Statuses of the lobby stream after which connecting again cannot help.
const LOBBY_FATAL = new Set([S.UNAUTHENTICATED, S.PERMISSION_DENIED, S.INVALID_ARGUMENT, S.UNIMPLEMENTED, S.ABORTED]);

// A seed per match from the fixture and seat (and --seed), never from ids the server
// draws, so a tournament created with an organiser's seed replays.
function matchSeed(base, assignment) {
  const text = `${base}/${assignment.fixture}/${assignment.seat}`;
  return crypto.createHash('sha256').update(text).digest().readUInt32BE(0);
}

// Lobby mode: one LobbyService.Connect stream with the bot token; Register; play every
// SeatAssignment pushed down the stream on its own Play stream with a fresh Bot (nothing
// crosses matches), up to --concurrency at once; reconnect with backoff, where the
// server sends the running matches again (resumed) and a seat already played is not
// started twice.
class Lobby {
  constructor(opts) {
    this.opts = opts;
    this.client = new v1.LobbyService(opts.server, grpc.credentials.createInsecure());
    this.running = new Map(); // `${match_id}/${seat}` -> Promise
    this.finished = 0;
    this.failed = 0;
    this.stopping = false;
    this.call = null;
    this.done = null; // resolves run()
  }

  log(...parts) {
    if (this.opts.verbose) process.stderr.write(`[node lobby] ${parts.join(' ')}\n`);
  }

  async games() {
    if (this.opts.games) return this.opts.games;
    const matches = new v1.MatchService(this.opts.server, grpc.credentials.createInsecure());
    const listed = await retrying(matches, 'ListGames', {});
    matches.close();
    return listed.games.map((g) => g.game); // it plays any game: it reads only legal_actions
  }

  async run() {
    const games = await this.games();
    let failures = 0;
    while (!this.stopping) {
      const outcome = await this.session(games);
      if (outcome.registered) failures = 0;
      if (this.stopping) break;
      if (outcome.error && LOBBY_FATAL.has(outcome.error.code)) {
        throw Object.assign(new Error(`lobby refused: ${S[outcome.error.code]} ${outcome.error.details}`), {
          rich: richError(outcome.error),
        });
      }
      failures += 1;
      this.log('lobby stream ended', outcome.error ? S[outcome.error.code] : 'OK', '; reconnecting');
      await sleep(Math.min(10_000, 200 * 2 ** Math.min(failures, 6)) * (0.5 + Math.random()));
    }
    await Promise.allSettled(this.running.values());
  }

  session(games) {
    return new Promise((resolve) => {
      const md = new grpc.Metadata();
      md.set('authorization', `Bearer ${this.opts.botToken}`);
      const call = this.client.Connect(md);
      this.call = call;
      let registered = false;
      let settled = false;
      const finish = (error) => {
        if (settled) return;
        settled = true;
        this.call = null;
        resolve({ registered, error });
      };
      call.on('data', (response) => {
        if (response.kind === 'registered') {
          registered = true;
          const r = response.registered;
          this.log('registered as', r.bot_name, r.max_concurrent, 'at once, games', r.games.join(','));
        } else if (response.kind === 'assignment') {
          this.start(response.assignment);
        }
      });
      call.on('error', (err) => finish(err.code === S.CANCELLED && this.stopping ? null : err));
      call.on('end', () => finish(null));
      call.write({
        register: { games, max_concurrent: this.opts.concurrency, client: `speeltafel node bot.js (node ${process.version})` },
      });
    });
  }

  start(assignment) {
    const key = `${assignment.match_id}/${assignment.seat}`;
    if (this.running.has(key)) {
      this.log('already playing', key, '(resumed)');
      return;
    }
    this.log(assignment.resumed ? 'resuming' : 'seated in', assignment.game, key, 'fixture', assignment.fixture);
    const bot = new Bot({
      ...this.opts,
      match: assignment.match_id,
      token: assignment.token,
      seed: this.opts.seed === null ? null : matchSeed(this.opts.seed, assignment),
      dropAfter: 0,
      resend: false,
    });
    const play = bot
      .run()
      .then((report) => {
        this.finished += 1;
        const line = { ...report, tournament_id: assignment.tournament_id, fixture: assignment.fixture, game: assignment.game };
        process.stdout.write(`${JSON.stringify(line)}\n`);
      })
      .catch((err) => {
        this.failed += 1;
        process.stderr.write(`node bot: match ${assignment.match_id} failed: ${err.message}\n`);
      })
      .finally(() => {
        bot.client.close();
        this.running.delete(key);
        if (this.opts.maxMatches && this.finished + this.failed >= this.opts.maxMatches) this.stop();
      });
    this.running.set(key, play);
  }

  // Leave the lobby (no new seats); the running matches play to their end.
  stop() {
    if (this.stopping) return;
    this.stopping = true;
    if (this.call) this.call.cancel();
  }
}

async function lobbyMain(opts) {
  const lobby = new Lobby(opts);
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => lobby.stop());
  try {
    await lobby.run();
    lobby.client.close();
    process.stderr.write(`node bot: left the lobby after ${lobby.finished} matches (${lobby.failed} failed)\n`);
    process.exit(lobby.failed ? 1 : 0);
  } catch (err) {
    process.stderr.write(`node bot failed: ${err.message}\n`);
    process.exit(1);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.botToken && !opts.match) return lobbyMain(opts);
  const bot = new Bot(opts);
  try {
    const report = await bot.run();
    process.stdout.write(`${JSON.stringify(report)}\n`);
    bot.client.close();
  } catch (err) {
    const rich = err.rich ?? (err.code !== undefined ? richError(err) : null);
    process.stderr.write(`node bot failed: ${err.message}${rich ? ` (rule ${rich.reason || '-'})` : ''}\n`);
    process.exit(1);
  }
}

if (require.main === module) main();
module.exports = { Bot, Lobby, matchSeed, richError, protoFields, seatMetadata, v1 };
