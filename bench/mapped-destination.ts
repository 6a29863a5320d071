/**
 * The `mapped` bench system's destination (an Actions destination, priced): two
 * mappings that both match the bench's Order Completed track, so every message makes two requests,
 * each body built from the event by a mapping. The first carries the messageId (the receiver's
 * receipt); the second names it `orderEventId`, so the receiver counts each message once.
 */
export function mappedDestination(receiverUrl: string) {
  return {
    type: 'actions',
    name: 'bench mapped',
    enabled: true,
    sharedSecret: 'bench-secret',
    mappings: [
      {
        name: 'Record order',
        enabled: true,
        trigger: 'type = "track" and event = "Order Completed"',
        settings: {
          url: receiverUrl,
          method: 'POST',
          data: {
            messageId: { '@path': '$.messageId' },
            contact: { '@path': '$.userId' },
            order: { id: { '@path': '$.properties.orderId' }, total: { '@path': '$.properties.total' }, currency: { '@path': '$.properties.currency' } },
          },
        },
      },
      {
        name: 'Notify channel',
        enabled: true,
        trigger: 'type = "track" and event = "Order Completed"',
        settings: {
          url: `${receiverUrl}/notify`,
          method: 'POST',
          headers: { 'X-Source': 'switchyard-bench' },
          data: {
            orderEventId: { '@path': '$.messageId' },
            text: { '@template': 'New order {{properties.orderId}} from {{userId}}: {{properties.total}} {{properties.currency}}' },
          },
        },
      },
    ],
  };
}
