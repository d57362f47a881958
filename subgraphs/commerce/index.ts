export { platformOrders, orderById } from './commerce.service.js';
export type { Order, OrderStatus } from './commerce.service.js';
export { ORDER_STATUSES } from './commerce.tables.js';
