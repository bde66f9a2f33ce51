import express, { type Express } from 'express';
import request from 'supertest';
import { ConfigurationError } from '../src/config/index.js';
import { errorHandler } from '../src/errors/index.js';
import { conventions } from '../src/preset.js';
import { crossSiteProtection } from '../src/security/index.js';

const TRUSTED = 'https://app.example.com';

const build = (guard: express.RequestHandler | express.RequestHandler[], withErrorHandler = true): Express => {
  const app = express();
  app.use(guard);
  app.all('/v1/sessions', (req, res) => {
    res.status(req.method === 'POST' ? 201 : 200).json({ method: req.method });
  });
  if (withErrorHandler) app.use(errorHandler({ production: true, log: false }));
  return app;
};

const REFUSED = { errors: [{ message: 'A state-changing request from another site is not allowed.', code: 40305 }] };

describe('crossSiteProtection()', () => {
  const app = build(crossSiteProtection({ trustedOrigins: [TRUSTED, /^https:\/\/[a-z]+\.partner\.example$/] }));

  describe('with Fetch Metadata (Sec-Fetch-Site)', () => {
    it.each([
      ['cross-site', 'https://evil.example'],
      ['cross-site', 'null'],
      ['cross-site', undefined],
      ['same-site', 'https://evil.example'],
    ])('refuses a POST with Sec-Fetch-Site: %s and Origin %s with 403 JSON', async (site, origin) => {
      let call = request(build(crossSiteProtection({ trustedOrigins: [TRUSTED], allowSameSite: site !== 'same-site' })))
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', site)
        .type('form')
        .send('username=mallory&password=x');
      if (origin !== undefined) call = call.set('Origin', origin);
      const res = await call;
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual(REFUSED);
    });

    it.each([
      ['same-origin', 'http://127.0.0.1'],
      ['none', undefined],
      ['same-site', TRUSTED],
      ['cross-site', TRUSTED],
      ['cross-site', 'https://eu.partner.example'],
    ])('lets a POST with Sec-Fetch-Site: %s and Origin %s through', async (site, origin) => {
      let call = request(app).post('/v1/sessions').set('Sec-Fetch-Site', site);
      if (origin !== undefined) call = call.set('Origin', origin);
      expect((await call).status).toBe(201);
    });

    it('treats same-site as cross-site by default: a sibling subdomain cannot force a sign-in (login CSRF)', async () => {
      const res = await request(app)
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', 'same-site')
        .set('Origin', 'https://blog.example.com')
        .type('form')
        .send('username=mallory&password=x');
      expect(res.status).toBe(403);
      expect(res.body).toEqual(REFUSED);
      const noOrigin = await request(app).post('/v1/sessions').set('Sec-Fetch-Site', 'same-site');
      expect(noOrigin.status).toBe(403);
    });

    it('lets same-site through when the site is configured as trusted (allowSameSite: true)', async () => {
      const lenient = build(crossSiteProtection({ allowSameSite: true }));
      const res = await request(lenient)
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', 'same-site')
        .set('Origin', 'https://www.example.com');
      expect(res.status).toBe(201);
    });

    it('lets every safe method through, cross-site too', async () => {
      for (const method of ['get', 'head', 'options'] as const) {
        const res = await request(app)
          [method]('/v1/sessions')
          .set('Sec-Fetch-Site', 'cross-site')
          .set('Origin', 'https://evil.example');
        expect(res.status).toBe(200);
      }
    });

    it('checks PUT, PATCH and DELETE as well as POST', async () => {
      for (const method of ['put', 'patch', 'delete'] as const) {
        const res = await request(app)[method]('/v1/sessions').set('Sec-Fetch-Site', 'cross-site');
        expect(res.status).toBe(403);
      }
    });

    it('does not trust a look-alike of a trusted origin', async () => {
      const res = await request(app)
        .post('/v1/sessions')
        .set('Sec-Fetch-Site', 'cross-site')
        .set('Origin', `${TRUSTED}.evil.example`);
      expect(res.status).toBe(403);
    });
  });

  describe('without Fetch Metadata: Origin decides', () => {
    it.each([
      ['https://evil.example', 403],
      ['null', 403],
      [TRUSTED, 201],
    ])('Origin %s: %i', async (origin, status) => {
      const res = await request(app).post('/v1/sessions').set('Origin', origin);
      expect(res.status).toBe(status);
    });

    it("lets through an Origin naming this host and scheme (an older browser's same-origin request)", async () => {
      const res = await request(app).post('/v1/sessions').set('Host', 'api.example.com').set('Origin', 'http://api.example.com');
      expect(res.status).toBe(201);
      const proxied = express();
      proxied.set('trust proxy', 'loopback');
      proxied.use(build(crossSiteProtection()));
      const secure = await request(proxied)
        .post('/v1/sessions')
        .set('Host', 'api.example.com')
        .set('X-Forwarded-Proto', 'https')
        .set('Origin', 'https://api.example.com');
      expect(secure.status).toBe(201);
    });

    it('compares the scheme too: Origin http://host on an https request, or the other way round, is another origin', async () => {
      const plain = await request(app)
        .post('/v1/sessions')
        .set('Host', 'api.example.com')
        .set('Origin', 'https://api.example.com');
      expect(plain.status).toBe(403);
      const proxied = express();
      proxied.set('trust proxy', 'loopback');
      proxied.use(build(crossSiteProtection()));
      const downgraded = await request(proxied)
        .post('/v1/sessions')
        .set('Host', 'api.example.com')
        .set('X-Forwarded-Proto', 'https')
        .set('Origin', 'http://api.example.com');
      expect(downgraded.status).toBe(403);
    });

    it('lets a client that sends neither header through: not a browser, it needs to do nothing', async () => {
      const res = await request(app).post('/v1/sessions').type('form').send('username=alice&password=x');
      expect(res.status).toBe(201);
    });
  });

  it('answers its refusal in JSON without errorHandler() too', async () => {
    const res = await request(build(crossSiteProtection(), false)).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site');
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40305);
  });

  it('refuses wrong options at start-up', () => {
    expect(() => crossSiteProtection({ trustedOrigins: ['null'] })).toThrow(ConfigurationError);
    expect(() => crossSiteProtection({ trustedOrigins: ['https://app.example.com/'] })).toThrow(/trustedOrigins/);
    expect(() => crossSiteProtection({ trustedOrigins: [/partner/] })).toThrow(/anchored/);
    expect(() => crossSiteProtection({ allowSameSite: 'yes' as never })).toThrow(/allowSameSite/);
    expect(() => crossSiteProtection({ trustedOrigin: [] } as never)).toThrow(ConfigurationError);
  });
});

describe('crossSiteProtection in conventions()', () => {
  it('is on by default: a cross-site form post to a sign-in door is refused', async () => {
    const res = await request(build(conventions()))
      .post('/v1/sessions')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', 'https://evil.example')
      .type('form')
      .send('username=mallory&password=x');
    expect(res.status).toBe(403);
    expect(res.body.errors[0].code).toBe(40305);
  });

  it("trusts corsPolicy's origins for credentialed cross-origin calls", async () => {
    const app = build(conventions({ corsPolicy: { origins: [TRUSTED] } }));
    const allowed = await request(app).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site').set('Origin', TRUSTED);
    expect(allowed.status).toBe(201);
    expect(allowed.headers['access-control-allow-origin']).toBe(TRUSTED);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    const other = await request(app)
      .post('/v1/sessions')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', 'https://evil.example');
    expect(other.status).toBe(403);
  });

  it("follows corsPolicy's decision for the request, even with trustedOrigins: [] (followCors, the default)", async () => {
    const app = build(conventions({ corsPolicy: { origins: [TRUSTED] }, crossSiteProtection: { trustedOrigins: [] } }));
    expect((await request(app).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site').set('Origin', TRUSTED)).status).toBe(201);
    const other = await request(app)
      .post('/v1/sessions')
      .set('Sec-Fetch-Site', 'cross-site')
      .set('Origin', 'https://evil.example');
    expect(other.status).toBe(403);
  });

  it('takes its own trustedOrigins (with followCors: false, else what corsPolicy allows passes), and can be switched off', async () => {
    const own = build(
      conventions({ corsPolicy: { origins: [TRUSTED] }, crossSiteProtection: { trustedOrigins: [], followCors: false } }),
    );
    expect((await request(own).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site').set('Origin', TRUSTED)).status).toBe(403);
    const off = build(conventions({ crossSiteProtection: false }));
    expect((await request(off).post('/v1/sessions').set('Sec-Fetch-Site', 'cross-site')).status).toBe(201);
  });
});
