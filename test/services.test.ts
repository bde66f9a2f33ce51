import { createConnection } from 'node:net';
import { launchChromium } from './support/chromium.js';
import { CHROMIUM, describeWith, REDIS_SERVER, type RedisServer, startRedis } from './support/services.js';

// The test harness itself: the real services the other suites stand on start.
describeWith(REDIS_SERVER, 'test harness: redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('answers PING on its port', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = createConnection(redis.port, '127.0.0.1', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        resolve(data.toString());
        socket.end();
      });
      socket.once('error', reject);
    });
    expect(reply).toBe('+PONG\r\n');
  });
});

describeWith(CHROMIUM, 'test harness: headless Chromium', () => {
  it('runs a script in a page', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.setContent('<p id="p">hi</p>');
      expect(await page.evaluate(() => 6 * 7)).toBe(42);
    } finally {
      await browser.close();
    }
  });
});
