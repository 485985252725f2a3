// A small kafkajs 2.2.4 client for tests/cli/test_serve_kafkajs.sh, against `ksim serve`.
//
//   node client.js produce BROKERS TOPIC COUNT PREFIX   idempotent producer: PREFIX-0 .. PREFIX-(COUNT-1),
//                                                      keyed k<i % 4>; prints "produced COUNT"
//   node client.js consume BROKERS TOPIC COUNT GROUP   one group member from the beginning until COUNT
//                                                      records came; prints "<partition> <offset> <value>"
//                                                      per record, then "consumed COUNT"
//   node client.js member BROKERS TOPIC GROUP NAME     a group member that prints "<NAME> assigned
//                                                      <partitions>" on each join, until SIGTERM
//
// Exit 0 on success, 1 on an error (printed).
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [mode, brokers, topic, ...rest] = process.argv.slice(2);
const kafka = new Kafka({
  clientId: 'kafkajs',
  brokers: brokers.split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: 20, initialRetryTime: 100 },
});

async function produce(count, prefix) {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < count; i += 10) {
    const messages = [];
    for (let j = i; j < Math.min(count, i + 10); j++) {
      messages.push({ key: `k${j % 4}`, value: `${prefix}-${j}` });
    }
    await producer.send({ topic, messages });
  }
  await producer.disconnect();
  console.log(`produced ${count}`);
}

async function consume(count, group) {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  await new Promise((resolve, reject) => {
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          console.log(`${partition} ${message.offset} ${message.value.toString()}`);
          seen += 1;
          if (seen === count) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  console.log(`consumed ${seen}`);
}

async function member(group, name) {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500 });
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    const assigned = event.payload.memberAssignment[topic] || [];
    console.log(`${name} assigned ${assigned.slice().sort().join(',')}`);
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async () => {} });
  process.on('SIGTERM', async () => {
    await consumer.disconnect();  // LeaveGroup: the others rebalance at once
    console.log(`${name} left`);
    process.exit(0);
  });
}

async function main() {
  if (mode === 'produce') return produce(Number(rest[0]), rest[1]);
  if (mode === 'consume') return consume(Number(rest[0]), rest[1]);
  if (mode === 'member') return member(rest[0], rest[1]);
  throw new Error(`unknown mode ${mode}`);
}

main().catch((error) => {
  console.error(`kafkajs client: ${error.stack || error}`);
  process.exit(1);
});
