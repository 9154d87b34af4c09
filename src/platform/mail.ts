import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type nodemailerModule from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { Config } from '../config/index.ts';

// The one way the server sends e-mail. With `smtp_address` configured, messages go to that SMTP server; without
// it, each message is written whole (as it would have been sent) to `<data dir>/mail/<time>-<random>.eml` and
// logged, so that nothing is lost and an administrator can read or forward it.

/** A message ready to send: one recipient, its text and HTML bodies, and its headers. */
export interface MailMessage {
  to: string;
  /** The display name of the From address (the acting user); the address is `email_from`. */
  fromName: string;
  subject: string;
  text: string;
  html: string;
  /** `<...@host>`, as the Message-ID header reads. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  /** Further headers (List-Id, List-Unsubscribe, X-GitLab-*). */
  headers: Record<string, string>;
}

export interface Mailer {
  /** Sends one message; rejects when it was not accepted (the caller's job retries). Answers the .eml file written, if any. */
  send(message: MailMessage): Promise<{ file: string | null }>;
  close(): void;
}

export function createMailer(config: Config, log?: { info(obj: object, msg: string): void }): Mailer {
  const smtp = config.smtp.address;
  // nodemailer is read with the first message: a server that sends none (or not yet) never loads it. Through
  // require, as the package is CommonJS: the worker bundle leaves it in node_modules (scripts/build.mjs), and a
  // bundle run through vm.Script cannot import().
  let transport: Promise<Transporter> | null = null;
  const open = async (): Promise<Transporter> => {
    const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof nodemailerModule;
    return smtp
      ? nodemailer.createTransport({
        host: smtp, port: config.smtp.port, secure: config.smtp.tls,
        auth: config.smtp.user ? { user: config.smtp.user, pass: config.smtp.password ?? '' } : undefined,
        connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000,
      })
      : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  };
  return {
    async send(m) {
      const info = await (await (transport ??= open())).sendMail({
        from: { name: m.fromName, address: config.emailFrom }, to: m.to, subject: m.subject, text: m.text, html: m.html,
        messageId: m.messageId, inReplyTo: m.inReplyTo, references: m.references, headers: m.headers,
      });
      if (smtp) return { file: null };
      const dir = join(config.dataDir, 'mail');
      mkdirSync(dir, { recursive: true });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`;
      const file = join(dir, name);
      writeFileSync(`${file}.tmp`, info.message as Buffer);
      renameSync(`${file}.tmp`, file);
      log?.info({ to: m.to, subject: m.subject, file }, 'e-mail written (no SMTP server configured)');
      return { file };
    },
    close() {
      void transport?.then((t) => t.close(), () => {});
    },
  };
}
