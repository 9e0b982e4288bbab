// The `alerts:` section (issue 32): named channels of seven types with their required keys, legacy
// url-only entries still webhooks, a target's `alerts: [names]`, and FILE:LINE problems that never
// repeat a channel URL (it may be the secret).
import { describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../../src/config/monitor.js';
import { configProblems } from '../../helpers/monitor-config.js';

const T = 'targets:\n  api: {url: http://127.0.0.1/h}\n';

describe('alerts: channels', () => {
  it('today\'s entries keep working: {url} a JSON webhook, {url, format: slack} a Slack channel, named webhook-N', () => {
    const c = parseMonitorConfig(`alerts:\n  - url: https://hooks.example.com/a\n  - {url: https://hooks.slack.com/services/T/B/X, format: slack}\n${T}`);
    expect(c.alerts).toEqual([
      { name: 'webhook-1', type: 'webhook', format: 'json', url: 'https://hooks.example.com/a' },
      { name: 'webhook-2', type: 'slack', url: 'https://hooks.slack.com/services/T/B/X' },
    ]);
  });

  it('every type with its settings and defaults', () => {
    const c = parseMonitorConfig(
      `public_url: https://status.example.com/\nalerts:\n` +
        `  - {name: ops-mail, type: email, smtp: "smtps://u:p@mail.example.com:465", from: mkt@example.com, to: [ops@example.com]}\n` +
        `  - {name: relay, type: email, smtp: "smtp://mail.example.com", smtp_password_env: MKT_SMTP_PASSWORD, from: mkt@example.com, to: ops@example.com}\n` +
        `  - {name: pager, type: pagerduty, routing_key: abc123}\n` +
        `  - {name: pager2, type: pagerduty, routing_key: abc123, url: "http://127.0.0.1:9/v2/enqueue", severity: warning}\n` +
        `  - {name: team-chat, type: slack, url: https://hooks.slack.com/x}\n` +
        `  - {name: d, type: discord, url: https://discord.com/api/webhooks/1/x}\n` +
        `  - {name: t, type: teams, url: https://example.webhook.office.com/x}\n` +
        `  - {name: phone, type: ntfy, url: https://ntfy.sh/mkt-ops, token: tk_1}\n` +
        `  - {name: hook, url: https://example.com/h, secret: s3}\n` +
        T,
    );
    expect(c.publicUrl).toBe('https://status.example.com');
    expect(c.alerts).toEqual([
      { name: 'ops-mail', type: 'email', smtp: 'smtps://u:p@mail.example.com:465', from: 'mkt@example.com', to: ['ops@example.com'] },
      { name: 'relay', type: 'email', smtp: 'smtp://mail.example.com', smtpPasswordEnv: 'MKT_SMTP_PASSWORD', from: 'mkt@example.com', to: ['ops@example.com'] },
      { name: 'pager', type: 'pagerduty', routingKey: 'abc123', url: 'https://events.pagerduty.com/v2/enqueue', severity: 'critical' },
      { name: 'pager2', type: 'pagerduty', routingKey: 'abc123', url: 'http://127.0.0.1:9/v2/enqueue', severity: 'warning' },
      { name: 'team-chat', type: 'slack', url: 'https://hooks.slack.com/x' },
      { name: 'd', type: 'discord', url: 'https://discord.com/api/webhooks/1/x' },
      { name: 't', type: 'teams', url: 'https://example.webhook.office.com/x' },
      { name: 'phone', type: 'ntfy', url: 'https://ntfy.sh/mkt-ops', token: 'tk_1' },
      { name: 'hook', type: 'webhook', format: 'json', url: 'https://example.com/h', secret: 's3' },
    ]);
  });

  it('problems with FILE:LINE: unknown type, missing name, repeated name, each type\'s required keys, keys of another type', () => {
    const text =
      'alerts:\n' +
      '  - {name: a, type: sms, url: https://x.example}\n' + // 2
      '  - {type: slack, url: https://x.example}\n' + // 3
      '  - {name: b, url: https://x.example}\n' + // 4
      '  - {name: b, url: https://y.example}\n' + // 5
      '  - {name: c, type: pagerduty}\n' + // 6
      '  - {name: d, type: email, smtp: "http://mail.example.com", from: nobody, to: []}\n' + // 7
      '  - {name: e, type: slack, url: https://x.example, routing_key: k}\n' + // 8
      '  - {name: f, type: email, from: a@example.com, to: b@example.com, smtp_password_env: "not a name"}\n' + // 9
      T;
    expect(configProblems(text)).toEqual([
      'm.yaml:2: alerts.0.type must be one of webhook, slack, discord, teams, ntfy, pagerduty, email',
      'm.yaml:3: alerts.1 needs a name (targets route alerts by it; only a bare `url` entry may leave it out)',
      'm.yaml:5: alerts.3.name repeats the alert channel name b',
      'm.yaml:6: alerts.4 needs a routing_key (the integration key of a PagerDuty service, Events API v2)',
      'm.yaml:7: alerts.5.smtp must be smtps://[user[:password]@]host[:port] or smtp://... (its value is not repeated here: it may hold a password)',
      'm.yaml:7: alerts.5.from must be one email address, like mkt@example.com',
      'm.yaml:7: alerts.5.to must be an email address or a list of them',
      'm.yaml:8: alerts.6.routing_key is not a known setting (known: name, type, url)',
      'm.yaml:9: alerts.7 needs smtp: smtps://user:pass@host:465 (implicit TLS) or smtp://host:587 (STARTTLS when offered)',
      'm.yaml:9: alerts.7.smtp_password_env must be the name of an environment variable, like MKT_SMTP_PASSWORD',
    ]);
  });

  it('a bad channel URL is refused without repeating it (the token in it stays out of logs and terminals)', () => {
    const problems = configProblems(`alerts:\n  - {name: s, type: slack, url: "ftp://hooks.example/T0/SECRET-TOKEN"}\n${T}`);
    expect(problems).toEqual(['m.yaml:2: alerts.0.url must be an http(s) URL (its value is not repeated here: it may hold a secret)']);
    expect(problems.join('\n')).not.toContain('SECRET-TOKEN');
  });
});

describe('targets: alerts: [names]', () => {
  it('names channels; [] means none; absent means every channel', () => {
    const c = parseMonitorConfig(
      'alerts:\n  - {name: mail, type: slack, url: https://x.example}\n  - {name: pager, type: pagerduty, routing_key: k}\n' +
        'targets:\n  api: {url: http://127.0.0.1/h, alerts: [pager, mail, pager]}\n  quiet: {url: http://127.0.0.1/h, alerts: []}\n  all: {url: http://127.0.0.1/h}\n',
    );
    expect(c.targets.map((t) => [t.name, t.alerts])).toEqual([['api', ['pager', 'mail']], ['quiet', []], ['all', undefined]]);
  });

  it('a name no channel has is a problem with its line', () => {
    expect(configProblems('alerts:\n  - {name: mail, type: slack, url: https://x.example}\ntargets:\n  api:\n    url: http://127.0.0.1/h\n    alerts: [mail, pagr]\n')).toEqual([
      'm.yaml:6: targets.api.alerts.1 names no alert channel: pagr (known: mail)',
    ]);
  });
});
